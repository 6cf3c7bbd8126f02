#include "ops/cpu/conv_gemm.h"

#include <Eigen/Core>
#include <algorithm>
#include <string>
#include <type_traits>

#include "core/error.h"
#include "ops/cpu/conv_algorithms.h"

#include "ops/cpu/blas.h"
#include "ops/cpu/elementwise.h"
#include "ops/cpu/parallel.h"

namespace mxlite::cpu {
namespace {

// How many images run at once: one per intra-op thread, never more than the batch.
int64_t ImageLanes(int64_t batch) {
  return std::max<int64_t>(1, std::min<int64_t>(IntraOpThreads(), batch));
}

// Runs fn(lane, image) for every image. Images [0, batch / lanes * lanes) run `lanes` at a time,
// lane l taking images l, l + lanes, ... (so a lane's first image is image `lane`); work inside
// them is nested and runs inline on the lane's thread. The rest run one by one on the caller, whose
// GEMMs and lowerings use the whole pool.
template <typename Fn>
void ForEachImage(int64_t batch, int64_t lanes, Fn&& fn) {
  const int64_t lane_images = lanes > 1 ? batch / lanes * lanes : 0;
  if (lane_images > 0) {
    ParallelFor(lanes, [&](int64_t lane) {
      for (int64_t image = lane; image < lane_images; image += lanes) fn(lane, image);
    });
  }
  for (int64_t image = lane_images; image < batch; ++image) fn(int64_t{0}, image);
}

// Strides of one image and of one group's first channel, per layout.
struct ImageLayout {
  int64_t data_image, output_image;  // elements per image
  int64_t data_group, output_group;  // offset of group g's first channel is g * this
  int64_t output_ld;                 // leading dimension of the output matrix in the GEMM
};

ImageLayout LayoutOf(const ConvGeometry& g) {
  ImageLayout layout;
  layout.data_image = g.in_channels * g.in_spatial();
  layout.output_image = g.out_channels * g.out_spatial();
  if (g.channels_last()) {
    layout.data_group = g.in_channels_per_group();
    layout.output_group = g.out_channels_per_group();
    layout.output_ld = g.out_channels;
  } else {
    layout.data_group = g.in_channels_per_group() * g.in_spatial();
    layout.output_group = g.out_channels_per_group() * g.out_spatial();
    layout.output_ld = g.out_spatial();
  }
  return layout;
}

// Lowers group `group` of one image into `lowered` (Im2Col or Im2Row by layout).
template <typename T>
void Lower(const ConvGeometry& g, const T* image, int64_t group, T* lowered) {
  const int64_t channels = g.in_channels_per_group();
  if (g.channels_last()) {
    Im2Row(g, g.in_channels, group * channels, channels, image, lowered);
  } else {
    Im2Col(g, channels, image + group * channels * g.in_spatial(), lowered);
  }
}

// Adds the lowered matrix of group `group` back into one image (Col2Im or Row2Im by layout).
template <typename T>
void Unlower(const ConvGeometry& g, const T* lowered, int64_t group, T* image) {
  const int64_t channels = g.in_channels_per_group();
  if (g.channels_last()) {
    Row2Im(g, g.in_channels, group * channels, channels, lowered, image);
  } else {
    Col2Im(g, channels, lowered, image + group * channels * g.in_spatial());
  }
}

}  // namespace

template <typename T>
void ConvolutionForwardGemm(const ConvGeometry& g, const T* data, const T* weight, const T* bias,
                            T* output, ScratchSpace& scratch, const Epilogue<T>& clamp,
                            const PreparedConvWeight* prepared) {
  const ImageLayout layout = LayoutOf(g);
  const int64_t lanes = ImageLanes(g.batch);
  const int64_t out_per_group = g.out_channels_per_group(), patch = g.patch_size();
  const int64_t spatial = g.out_spatial();
  T* lowered = scratch.GetArray<T>(lanes * g.lowered_size());
  ForEachImage(g.batch, lanes, [&](int64_t lane, int64_t n) {
    const T* image = data + n * layout.data_image;
    T* out = output + n * layout.output_image;
    T* buffer = lowered + lane * g.lowered_size();
    for (int64_t group = 0; group < g.groups; ++group) {
      Lower(g, image, group, buffer);
      const T* group_weight = weight + group * out_per_group * patch;
      T* group_out = out + group * layout.output_group;
      // The bias, the residual and the clamp go in the GEMM's store: no fill pass, C is never
      // read.
      Epilogue<T> epilogue = Epilogue<T>::Clamp(clamp.low, clamp.high);
      if (clamp.residual != nullptr) {
        epilogue.residual = clamp.residual + n * layout.output_image + group * layout.output_group;
        epilogue.residual_stride = layout.output_ld;
      }
      const T* group_bias = bias != nullptr ? bias + group * out_per_group : nullptr;
      if (g.channels_last()) {  // (OH*OW x O/G) = row (OH*OW x patch) * weight^T (patch x O/G)
        epilogue.column_bias = group_bias;
        if constexpr (std::is_same_v<T, float>) {
          if (prepared != nullptr) {
            Sgemm(Transpose::kNo, spatial, 1.0f, buffer, patch,
                  PreparedGemmGroup(*prepared, g, group), 0.0f, group_out, layout.output_ld,
                  epilogue);
            continue;
          }
        }
        Gemm<T>(Transpose::kNo, Transpose::kYes, spatial, out_per_group, patch, T(1), buffer, patch,
                group_weight, patch, T(0), group_out, layout.output_ld, epilogue);
      } else {  // (O/G x OH*OW) = weight (O/G x patch) * col (patch x OH*OW)
        epilogue.row_bias = group_bias;
        if constexpr (std::is_same_v<T, float>) {
          if (prepared != nullptr) {
            Sgemm(PreparedGemmGroup(*prepared, g, group), Transpose::kNo, spatial, 1.0f, buffer,
                  spatial, 0.0f, group_out, layout.output_ld, epilogue);
            continue;
          }
        }
        Gemm<T>(Transpose::kNo, Transpose::kNo, out_per_group, spatial, patch, T(1), group_weight,
                patch, buffer, spatial, T(0), group_out, layout.output_ld, epilogue);
      }
    }
  });
}

size_t PreparedConvWeight::bytes() const {
  size_t total = (by_tap.size() + reordered.size()) * sizeof(float);
  for (const PackedGemmOperand& group : groups) total += group.bytes();
  return total;
}

std::unique_ptr<PreparedConvWeight> PrepareGemmWeight(const ConvGeometry& g, const float* weight) {
  // Under Eigen (a CPU without AVX2 and FMA, or forced) a packed operand is unpacked on every
  // product: preparing would only add that copy.
  if (!PackedOperandsReadInPlace()) return nullptr;
  const int64_t out_per_group = g.out_channels_per_group(), patch = g.patch_size();
  auto prepared = std::make_unique<PreparedConvWeight>();
  for (int64_t group = 0; group < g.groups; ++group) {
    const float* group_weight = weight + group * out_per_group * patch;
    prepared->groups.push_back(
        g.channels_last() ? PackedGemmOperand::Pack(PackedGemmOperand::Side::kB, Transpose::kYes,
                                                    patch, out_per_group, group_weight, patch)
                          : PackedGemmOperand::Pack(PackedGemmOperand::Side::kA, Transpose::kNo,
                                                    out_per_group, patch, group_weight, patch));
  }
  return prepared;
}

const PackedGemmOperand& PreparedGemmGroup(const PreparedConvWeight& prepared,
                                           const ConvGeometry& g, int64_t group) {
  const int64_t out_per_group = g.out_channels_per_group(), patch = g.patch_size();
  const PackedGemmOperand::Side side =
      g.channels_last() ? PackedGemmOperand::Side::kB : PackedGemmOperand::Side::kA;
  const int64_t rows = g.channels_last() ? patch : out_per_group;
  const int64_t columns = g.channels_last() ? out_per_group : patch;
  MX_CHECK(static_cast<int64_t>(prepared.groups.size()) == g.groups && group < g.groups &&
           prepared.groups[group].side() == side && prepared.groups[group].rows() == rows &&
           prepared.groups[group].columns() == columns)
      << "convolution: the prepared weight (" << prepared.groups.size() << " groups"
      << (prepared.groups.empty() ? std::string()
                                  : ", " + std::to_string(prepared.groups[0].rows()) + "x" +
                                        std::to_string(prepared.groups[0].columns()))
      << ") was not made for " << DescribeGeometry(g) << " (" << g.groups << " groups of " << rows
      << "x" << columns << ")";
  return prepared.groups[group];
}

template <typename T>
void ConvolutionBackwardDataGemm(const ConvGeometry& g, const T* output_grad, const T* weight,
                                 T* data_grad, ScratchSpace& scratch) {
  const ImageLayout layout = LayoutOf(g);
  const int64_t lanes = ImageLanes(g.batch);
  const int64_t out_per_group = g.out_channels_per_group(), patch = g.patch_size();
  const int64_t spatial = g.out_spatial();
  T* lowered = scratch.GetArray<T>(lanes * g.lowered_size());
  ForEachImage(g.batch, lanes, [&](int64_t lane, int64_t n) {
    const T* grad = output_grad + n * layout.output_image;
    T* image = data_grad + n * layout.data_image;
    T* buffer = lowered + lane * g.lowered_size();
    std::fill(image, image + layout.data_image, T(0));
    for (int64_t group = 0; group < g.groups; ++group) {
      const T* group_weight = weight + group * out_per_group * patch;
      const T* group_grad = grad + group * layout.output_group;
      if (g.channels_last()) {  // row (OH*OW x patch) = grad (OH*OW x O/G) * weight (O/G x patch)
        Gemm<T>(Transpose::kNo, Transpose::kNo, spatial, patch, out_per_group, T(1), group_grad,
                layout.output_ld, group_weight, patch, T(0), buffer, patch);
      } else {  // col (patch x OH*OW) = weight^T (patch x O/G) * grad (O/G x OH*OW)
        Gemm<T>(Transpose::kYes, Transpose::kNo, patch, spatial, out_per_group, T(1), group_weight,
                patch, group_grad, layout.output_ld, T(0), buffer, spatial);
      }
      Unlower(g, buffer, group, image);
    }
  });
}

template <typename T>
void ConvolutionBackwardWeightGemm(const ConvGeometry& g, const T* data, const T* output_grad,
                                   T* weight_grad, ScratchSpace& scratch) {
  const ImageLayout layout = LayoutOf(g);
  const int64_t lanes = ImageLanes(g.batch);
  const int64_t out_per_group = g.out_channels_per_group(), patch = g.patch_size();
  const int64_t spatial = g.out_spatial(), weight_size = g.out_channels * patch;
  if (g.batch == 0) {
    std::fill(weight_grad, weight_grad + weight_size, T(0));
    return;
  }
  T* lowered = scratch.GetArray<T>(lanes * g.lowered_size());
  // Lane 0 sums into weight_grad itself, the other lanes into their own partial sums.
  T* partials = scratch.GetArray<T>((lanes - 1) * weight_size);
  ForEachImage(g.batch, lanes, [&](int64_t lane, int64_t n) {
    const T* image = data + n * layout.data_image;
    const T* grad = output_grad + n * layout.output_image;
    T* buffer = lowered + lane * g.lowered_size();
    T* sum = lane == 0 ? weight_grad : partials + (lane - 1) * weight_size;
    const T beta = n == lane ? T(0) : T(1);  // the lane's first image starts its sum
    for (int64_t group = 0; group < g.groups; ++group) {
      Lower(g, image, group, buffer);
      const T* group_grad = grad + group * layout.output_group;
      T* group_sum = sum + group * out_per_group * patch;
      if (g.channels_last()) {  // (O/G x patch) += grad^T (O/G x OH*OW) * row (OH*OW x patch)
        Gemm<T>(Transpose::kYes, Transpose::kNo, out_per_group, patch, spatial, T(1), group_grad,
                layout.output_ld, buffer, patch, beta, group_sum, patch);
      } else {  // (O/G x patch) += grad (O/G x OH*OW) * col^T (OH*OW x patch)
        Gemm<T>(Transpose::kNo, Transpose::kYes, out_per_group, patch, spatial, T(1), group_grad,
                layout.output_ld, buffer, spatial, beta, group_sum, patch);
      }
    }
  });
  for (int64_t lane = 1; lane < lanes; ++lane) {
    const T* partial = partials + (lane - 1) * weight_size;
    ForEachChunk(weight_size, [&](int64_t begin, int64_t end) {
      EigenArray<T>(weight_grad + begin, end - begin) +=
          EigenArray<const T>(partial + begin, end - begin);
    });
  }
}

template <typename T>
void SumPerChannel(const T* x, int64_t batch, int64_t channels, int64_t spatial, bool channels_last,
                   T* sums) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  std::fill(sums, sums + channels, T(0));
  Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>> total(sums, channels);
  if (channels_last) {  // each image is (spatial x channels): sum its rows
    for (int64_t n = 0; n < batch; ++n) {
      total +=
          Eigen::Map<const Matrix>(x + n * spatial * channels, spatial, channels).colwise().sum();
    }
  } else {  // each image is (channels x spatial): sum its columns
    for (int64_t n = 0; n < batch; ++n) {
      total += Eigen::Map<const Matrix>(x + n * channels * spatial, channels, spatial)
                   .rowwise()
                   .sum()
                   .transpose();
    }
  }
}

template <typename T>
void AddPerChannel(const T* values, int64_t batch, int64_t channels, int64_t spatial,
                   bool channels_last, T* x) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>> row(values, channels);
  ParallelFor(batch, [&](int64_t n) {
    if (channels_last) {
      Eigen::Map<Matrix>(x + n * spatial * channels, spatial, channels).rowwise() += row;
    } else {
      Eigen::Map<Matrix>(x + n * channels * spatial, channels, spatial).colwise() +=
          row.transpose();
    }
  });
}

#define MXLITE_INSTANTIATE_CONV_GEMM(T)                                                          \
  template void ConvolutionForwardGemm<T>(const ConvGeometry&, const T*, const T*, const T*, T*, \
                                          ScratchSpace&, const Epilogue<T>&,                     \
                                          const PreparedConvWeight*);                            \
  template void ConvolutionBackwardDataGemm<T>(const ConvGeometry&, const T*, const T*, T*,      \
                                               ScratchSpace&);                                   \
  template void ConvolutionBackwardWeightGemm<T>(const ConvGeometry&, const T*, const T*, T*,    \
                                                 ScratchSpace&);                                 \
  template void SumPerChannel<T>(const T*, int64_t, int64_t, int64_t, bool, T*);                 \
  template void AddPerChannel<T>(const T*, int64_t, int64_t, int64_t, bool, T*);

MXLITE_INSTANTIATE_CONV_GEMM(float)
MXLITE_INSTANTIATE_CONV_GEMM(double)

}  // namespace mxlite::cpu
