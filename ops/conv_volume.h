// 3-D convolution (NCDHW) as 2-D convolutions over slabs: how Convolution runs 3-D windows on the
// CPU, so every 2-D algorithm (GEMM lowering, direct, Winograd...) is a 3-D candidate, tuned and
// stored in the tuning DB as 2-D layers are.
//
// Output plane od of image n reads the input depths id = od * stride_d - pad_d + kd * dilate_d
// (kd < KD). The slab of (n, od) gathers them channel by channel into one (C * KD, H, W) image:
// slab channel c * KD + kd holds data[n, c, id], zeros where id falls outside the data. The plane
// is then the 2-D convolution of the slab with the weight (F, C/G, KD, KH, KW) read as it lies in
// memory, (F, C/G * KD, KH, KW), in the same num_group groups (a group's slab channels are
// contiguous, as its weight rows are). The N * OD slabs, in order (n, od), are the batch of one
// 2-D problem, run in chunks of `plane.batch` slabs (all chunks the same size), so a chunk's 2-D
// geometry is what the tuner times and the kept weight is prepared for.
//
// Backward: the data gradient is each chunk's 2-D data gradient added back through the gather's
// adjoint; the weight gradient is the sum of the chunks' 2-D weight gradients. Forward stores each
// chunk's planes into the output, adding the fused residual and clamping there, so each element is
// ((sum + bias) + residual) clamped, as in 2-D.
//
// Buffers belong to the caller; the gathers and stores split their copies over the intra-op
// threads.
#pragma once

#include <cstdint>
#include <string>

#include "core/shape.h"
#include "ops/conv_attributes.h"
#include "ops/cpu/conv_algorithms.h"

namespace mxlite {

struct VolumeConvGeometry {
  int64_t batch = 1, in_channels = 1, out_channels = 1, groups = 1;
  int64_t in_d = 1, in_h = 1, in_w = 1, out_d = 1, out_h = 1, out_w = 1;
  int64_t kernel_d = 1, stride_d = 1, pad_d = 0, dilate_d = 1;
  // One chunk's 2-D problem: plane.batch slabs of in_channels * kernel_d channels.
  cpu::ConvGeometry plane;

  int64_t slabs() const { return batch * out_d; }
  int64_t chunks() const { return slabs() / plane.batch; }
  int64_t in_plane() const { return in_h * in_w; }
  int64_t out_plane() const { return out_h * out_w; }
  // Elements of one chunk's gathered slabs and of its output planes.
  int64_t chunk_slab_elements() const;
  int64_t chunk_plane_elements() const;
  Shape output_shape() const { return Shape{batch, out_channels, out_d, out_h, out_w}; }
};

// Chunks hold at most this many elements of slabs and output planes together (unless one slab
// alone is larger): 32 MiB of float32.
inline constexpr int64_t kVolumeChunkElements = int64_t{8} << 20;

// The convolution of a 3-D `window` (layout NCDHW) over data (N, C, D, H, W). Errors name `owner`
// and the data shape: data that is not 5-D, channels num_group does not divide, a num_filter it
// does not divide, a dilated kernel that spans more than the padded data.
VolumeConvGeometry VolumeConvolutionGeometry(const ConvWindow& window, const Shape& data_shape,
                                             const std::string& owner);

// The convolution `window` describes from data of `data_shape` (N, C, D, H, W) to output extents
// given per axis (Deconvolution's adjoint convolution passes its own: positions whose window leaves
// the data read zeros, as ConvGeometry's do). Errors as VolumeConvolutionGeometry.
VolumeConvGeometry VolumeGeometryWithOutput(const ConvWindow& window, const Shape& data_shape,
                                            const std::vector<int64_t>& out_extents,
                                            const std::string& owner);

// One direction of the 3-D convolution `g` with `algorithm` (one of ops/cpu/conv_algorithms.h,
// for g.plane: the planned or heuristic pick of that 2-D problem), on NCDHW tensors:
//   forward:          reads data, weight, bias, residual, the clamp, prepared_weight; writes output
//   backward_data:    reads output_grad, weight                                  writes data_grad
//   backward_filter:  reads data, output_grad                                    writes weight_grad
// with ConvAlgorithm::Run's meaning of each field (the weight (F, C/G, KD, KH, KW) is g.plane's
// (F, C/G * KD, KH, KW); a prepared weight must be prepared for g.plane), each destination
// overwritten. Slabs and planes come from `scratch`, the algorithm's workspace from a scratch
// space per chunk.
template <typename T>
void RunVolume(const cpu::ConvAlgorithm& algorithm, conv::ConvDirection direction,
               const VolumeConvGeometry& g, const cpu::ConvTensors<T>& tensors,
               ScratchSpace& scratch);

}  // namespace mxlite
