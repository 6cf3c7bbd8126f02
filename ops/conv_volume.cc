#include "ops/conv_volume.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "ops/cpu/parallel.h"

namespace mxlite {
namespace {

// Runs fn(first, last) over [0, rows) in contiguous ranges, a few per intra-op thread, so a copy
// of many short rows does not pay a task per row.
template <typename Fn>
void ForRowRanges(int64_t rows, const Fn& fn) {
  const int64_t tasks = std::min<int64_t>(rows, 4 * cpu::IntraOpThreads());
  if (tasks <= 0) return;
  cpu::ParallelFor(tasks,
                   [&](int64_t task) { fn(rows * task / tasks, rows * (task + 1) / tasks); });
}

// The largest number of slabs that divides `slabs` and keeps a chunk within the element budget
// (at least 1).
int64_t SlabsPerChunk(int64_t slabs, int64_t elements_per_slab) {
  const int64_t limit = std::max<int64_t>(1, kVolumeChunkElements / elements_per_slab);
  for (int64_t size = std::min(slabs, limit); size > 1; --size) {
    if (slabs % size == 0) return size;
  }
  return 1;
}

// The input depth of output plane `od`'s tap `kd`, or -1 outside the data.
int64_t InputDepth(const VolumeConvGeometry& g, int64_t od, int64_t kd) {
  const int64_t depth = od * g.stride_d - g.pad_d + kd * g.dilate_d;
  return depth >= 0 && depth < g.in_d ? depth : -1;
}

}  // namespace

int64_t VolumeConvGeometry::chunk_slab_elements() const {
  return plane.batch * in_channels * kernel_d * in_plane();
}

int64_t VolumeConvGeometry::chunk_plane_elements() const {
  return plane.batch * out_channels * out_plane();
}

VolumeConvGeometry VolumeGeometryWithOutput(const ConvWindow& window, const Shape& data_shape,
                                            const std::vector<int64_t>& out_extents,
                                            const std::string& owner) {
  MX_CHECK(window.rank == 3 && out_extents.size() == 3) << owner << ": not a 3-D window";
  MX_CHECK(data_shape.ndim() == 5)
      << owner << ": data has shape " << data_shape << " but the 3-D kernel "
      << FormatIntTuple(window.kernel) << " needs a 5-D NCDHW tensor (N, C, D, H, W)";
  VolumeConvGeometry g;
  g.batch = data_shape[0];
  g.in_channels = data_shape[1];
  g.in_d = data_shape[2];
  g.in_h = data_shape[3];
  g.in_w = data_shape[4];
  g.out_channels = window.num_filter;
  g.groups = window.num_group;
  MX_CHECK(g.in_channels % g.groups == 0)
      << owner << ": data " << data_shape << " has " << g.in_channels
      << " channels, which num_group=" << g.groups << " does not divide";
  MX_CHECK(g.out_channels % g.groups == 0) << owner << ": num_filter=" << g.out_channels
                                           << " is not divisible by num_group=" << g.groups;
  g.kernel_d = window.kernel[0];
  g.stride_d = window.stride[0];
  g.pad_d = window.pad[0];
  g.dilate_d = window.dilate[0];
  g.out_d = out_extents[0];
  g.out_h = out_extents[1];
  g.out_w = out_extents[2];

  cpu::ConvGeometry& p = g.plane;
  SetGeometryWindow(window, p);
  p.in_channels = g.in_channels * g.kernel_d;
  p.out_channels = g.out_channels;
  p.groups = g.groups;
  p.in_h = g.in_h;
  p.in_w = g.in_w;
  p.out_h = g.out_h;
  p.out_w = g.out_w;
  const int64_t per_slab = p.in_channels * g.in_plane() + g.out_channels * g.out_plane();
  p.batch = g.slabs() == 0 ? 0 : SlabsPerChunk(g.slabs(), std::max<int64_t>(per_slab, 1));
  return g;
}

VolumeConvGeometry VolumeConvolutionGeometry(const ConvWindow& window, const Shape& data_shape,
                                             const std::string& owner) {
  MX_CHECK(window.rank == 3) << owner << ": not a 3-D window";
  MX_CHECK(data_shape.ndim() == 5)
      << owner << ": data has shape " << data_shape << " but the 3-D kernel "
      << FormatIntTuple(window.kernel) << " needs a 5-D NCDHW tensor (N, C, D, H, W)";
  std::vector<int64_t> out(3);
  for (int axis = 0; axis < 3; ++axis) {
    const int64_t in = data_shape[axis + 2];
    const int64_t span = window.dilate[axis] * (window.kernel[axis] - 1) + 1;
    MX_CHECK(span <= in + 2 * window.pad[axis])
        << owner << ": the kernel " << FormatIntTuple(window.kernel) << " dilated by "
        << FormatIntTuple(window.dilate) << " spans more than data " << data_shape << " padded by "
        << FormatIntTuple(window.pad);
    out[axis] = (in + 2 * window.pad[axis] - span) / window.stride[axis] + 1;
  }
  return VolumeGeometryWithOutput(window, data_shape, out, owner);
}

namespace {

// Writes chunk `chunk`'s slabs (plane.batch x (C * KD, H, W)) from data (N, C, D, H, W).
template <typename T>
void GatherSlabs(const VolumeConvGeometry& g, int64_t chunk, const T* data, T* slabs) {
  const int64_t first = chunk * g.plane.batch, plane = g.in_plane();
  // One row: the kernel_d planes of one channel of one slab.
  ForRowRanges(g.plane.batch * g.in_channels, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t slab = first + row / g.in_channels, c = row % g.in_channels;
      const int64_t n = slab / g.out_d, od = slab % g.out_d;
      const T* image = data + (n * g.in_channels + c) * g.in_d * plane;
      T* out = slabs + row * g.kernel_d * plane;
      for (int64_t kd = 0; kd < g.kernel_d; ++kd, out += plane) {
        const int64_t depth = InputDepth(g, od, kd);
        if (depth < 0) {
          std::fill(out, out + plane, T(0));
        } else {
          std::memcpy(out, image + depth * plane, sizeof(T) * plane);
        }
      }
    }
  });
}

// The adjoint of GatherSlabs: adds chunk `chunk`'s slab gradients into data_grad.
template <typename T>
void AddSlabsBack(const VolumeConvGeometry& g, int64_t chunk, const T* slabs, T* data_grad) {
  const int64_t first = chunk * g.plane.batch, last = first + g.plane.batch;
  const int64_t plane = g.in_plane();
  const int64_t first_image = first / g.out_d, last_image = (last - 1) / g.out_d;
  // Tasks own (image, channel) volumes of data_grad, so no two add to the same element.
  ForRowRanges((last_image - first_image + 1) * g.in_channels, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = first_image + row / g.in_channels, c = row % g.in_channels;
      T* image = data_grad + (n * g.in_channels + c) * g.in_d * plane;
      const int64_t slab_begin = std::max(first, n * g.out_d);
      const int64_t slab_end = std::min(last, (n + 1) * g.out_d);
      for (int64_t slab = slab_begin; slab < slab_end; ++slab) {
        const int64_t od = slab % g.out_d;
        const T* in = slabs + ((slab - first) * g.in_channels + c) * g.kernel_d * plane;
        for (int64_t kd = 0; kd < g.kernel_d; ++kd, in += plane) {
          const int64_t depth = InputDepth(g, od, kd);
          if (depth < 0) continue;
          T* out = image + depth * plane;
          for (int64_t i = 0; i < plane; ++i) out[i] += in[i];
        }
      }
    }
  });
}

// Calls fn(row, offset) for every output plane of chunk `chunk`: `row` its index among the
// chunk's planes (plane.batch x F), `offset` where it lies in an (N, F, OD, OH, OW) volume.
template <typename Fn>
void ForEachChunkPlane(const VolumeConvGeometry& g, int64_t chunk, const Fn& fn) {
  const int64_t first = chunk * g.plane.batch, plane = g.out_plane();
  ForRowRanges(g.plane.batch * g.out_channels, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t slab = first + row / g.out_channels, f = row % g.out_channels;
      const int64_t n = slab / g.out_d, od = slab % g.out_d;
      fn(row, ((n * g.out_channels + f) * g.out_d + od) * plane);
    }
  });
}

// Copies chunk `chunk`'s planes of `volume` (N, F, OD, OH, OW) into `planes` (plane.batch x
// (F, OH, OW)).
template <typename T>
void GatherPlanes(const VolumeConvGeometry& g, int64_t chunk, const T* volume, T* planes) {
  const int64_t plane = g.out_plane();
  ForEachChunkPlane(g, chunk, [&](int64_t row, int64_t offset) {
    std::memcpy(planes + row * plane, volume + offset, sizeof(T) * plane);
  });
}

// Stores chunk `chunk`'s planes into `output` (N, F, OD, OH, OW): each element (plane +
// residual, when not null) clamped to [low, high].
template <typename T>
void StorePlanes(const VolumeConvGeometry& g, int64_t chunk, const T* planes, const T* residual,
                 T low, T high, T* output) {
  const int64_t plane = g.out_plane();
  ForEachChunkPlane(g, chunk, [&](int64_t row, int64_t offset) {
    const T* in = planes + row * plane;
    T* out = output + offset;
    if (residual != nullptr) {
      const T* add = residual + offset;
      for (int64_t i = 0; i < plane; ++i) out[i] = std::clamp<T>(in[i] + add[i], low, high);
    } else {
      for (int64_t i = 0; i < plane; ++i) out[i] = std::clamp<T>(in[i], low, high);
    }
  });
}

template <typename T>
void ForwardVolume(const cpu::ConvAlgorithm& algorithm, const VolumeConvGeometry& g,
                   const cpu::ConvTensors<T>& tensors, T* slabs, T* planes, ScratchSpace& scratch) {
  cpu::ConvTensors<T> plane = tensors;  // weight, bias and prepared weight as given
  plane.data = slabs;
  plane.output = planes;
  plane.residual = nullptr;  // added, with the clamp, as the planes are stored
  plane.clamp_low = -std::numeric_limits<T>::infinity();
  plane.clamp_high = std::numeric_limits<T>::infinity();
  for (int64_t chunk = 0; chunk < g.chunks(); ++chunk) {
    GatherSlabs(g, chunk, tensors.data, slabs);
    ScratchSpace work(scratch.context());
    algorithm.Run(conv::ConvDirection::kForward, g.plane, plane, work);
    StorePlanes(g, chunk, planes, tensors.residual, tensors.clamp_low, tensors.clamp_high,
                tensors.output);
  }
}

template <typename T>
void BackwardDataVolume(const cpu::ConvAlgorithm& algorithm, const VolumeConvGeometry& g,
                        const cpu::ConvTensors<T>& tensors, T* slabs, T* planes,
                        ScratchSpace& scratch) {
  std::fill(tensors.data_grad, tensors.data_grad + g.batch * g.in_channels * g.in_d * g.in_plane(),
            T(0));
  cpu::ConvTensors<T> plane;
  plane.output_grad = planes;
  plane.weight = tensors.weight;
  plane.data_grad = slabs;
  for (int64_t chunk = 0; chunk < g.chunks(); ++chunk) {
    GatherPlanes(g, chunk, tensors.output_grad, planes);
    ScratchSpace work(scratch.context());
    algorithm.Run(conv::ConvDirection::kBackwardData, g.plane, plane, work);
    AddSlabsBack(g, chunk, slabs, tensors.data_grad);
  }
}

template <typename T>
void BackwardFilterVolume(const cpu::ConvAlgorithm& algorithm, const VolumeConvGeometry& g,
                          const cpu::ConvTensors<T>& tensors, T* slabs, T* planes,
                          ScratchSpace& scratch) {
  const int64_t weight_size = g.out_channels * g.plane.patch_size();
  T* chunk_grad = g.chunks() > 1 ? scratch.GetArray<T>(weight_size) : nullptr;
  cpu::ConvTensors<T> plane;
  plane.data = slabs;
  plane.output_grad = planes;
  for (int64_t chunk = 0; chunk < g.chunks(); ++chunk) {
    GatherSlabs(g, chunk, tensors.data, slabs);
    GatherPlanes(g, chunk, tensors.output_grad, planes);
    plane.weight_grad = chunk == 0 ? tensors.weight_grad : chunk_grad;
    ScratchSpace work(scratch.context());
    algorithm.Run(conv::ConvDirection::kBackwardFilter, g.plane, plane, work);
    if (chunk > 0) {
      for (int64_t i = 0; i < weight_size; ++i) tensors.weight_grad[i] += chunk_grad[i];
    }
  }
}

}  // namespace

template <typename T>
void RunVolume(const cpu::ConvAlgorithm& algorithm, conv::ConvDirection direction,
               const VolumeConvGeometry& g, const cpu::ConvTensors<T>& tensors,
               ScratchSpace& scratch) {
  if (g.slabs() == 0) return;
  T* slabs = scratch.GetArray<T>(g.chunk_slab_elements());
  T* planes = scratch.GetArray<T>(g.chunk_plane_elements());
  switch (direction) {
    case conv::ConvDirection::kForward:
      return ForwardVolume(algorithm, g, tensors, slabs, planes, scratch);
    case conv::ConvDirection::kBackwardData:
      return BackwardDataVolume(algorithm, g, tensors, slabs, planes, scratch);
    case conv::ConvDirection::kBackwardFilter:
      return BackwardFilterVolume(algorithm, g, tensors, slabs, planes, scratch);
  }
}

template void RunVolume<float>(const cpu::ConvAlgorithm&, conv::ConvDirection,
                               const VolumeConvGeometry&, const cpu::ConvTensors<float>&,
                               ScratchSpace&);
template void RunVolume<double>(const cpu::ConvAlgorithm&, conv::ConvDirection,
                                const VolumeConvGeometry&, const cpu::ConvTensors<double>&,
                                ScratchSpace&);

}  // namespace mxlite
