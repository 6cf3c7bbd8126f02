// CPU convolution algorithms: the candidates the convolution tuner enumerates, filters and times.
//
// Every algorithm computes the same convolution (ConvGeometry, ops/cpu/im2col.h; tensors laid out
// as in ops/cpu/conv_gemm.h) in one layout, for some directions and some shapes:
//
//   name               layout      directions                 shapes (Supports)
//   im2col_gemm        NCHW        fwd, bwd-data, bwd-filter  every valid geometry
//   im2row_gemm        NHWC        fwd, bwd-data, bwd-filter  every valid geometry
//   gemm_1x1           NCHW, NHWC  fwd, bwd-data, bwd-filter  1x1 kernel, stride 1, pad 0, out = in
//   winograd_2x2_3x3   NCHW        fwd, bwd-data              3x3, stride 1, dilation 1, any
//   winograd_4x4_3x3   NCHW        fwd, bwd-data              groups; any padding forward,
//                                                             pad <= 2 backward
//   depthwise_direct   NCHW, NHWC  fwd, bwd-data, bwd-filter  groups == in channels, out
//                                                             channels a multiple of them; any
//                                                             kernel, stride, pad, dilation
//   direct_nchw        NCHW        fwd                        C/G * KH * KW <= 512 (short
//                                                             reductions: a network's first
//                                                             layer); any kernel, stride, pad,
//                                                             dilation, groups
//   direct_nhwc        NHWC        fwd                        C * KH * KW <= 256, one group; any
//                                                             kernel, stride, pad, dilation
//   direct_nchw16c     NCHW16c     fwd                        channels and filters per group
//                                                             multiples of 16; any kernel,
//                                                             stride, pad, dilation
//   depthwise_direct   NCHW16c     fwd                        groups == channels == filters, a
//                                                             multiple of 16; any kernel,
//                                                             stride, pad, dilation
//   grouped_nchw16c    NCHW16c     fwd                        2, 4 or 8 channels and as many
//                                                             filters per group (groups inside
//                                                             blocks); any kernel, stride,
//                                                             pad, dilation
//
// A "valid geometry": every extent >= 1 (batch >= 0), groups dividing both channel counts, and
// out_h/out_w any size (positions whose window leaves the input read zeros, as in im2col).
// The (name, layout) pair is unique and stable (it keys the tuning database); within one problem
// the layout is fixed, so the name alone tells the candidates apart.
//
// WorkspaceBytes is exactly what Run takes from the ScratchSpace (each request rounded up to the
// pool's 64-byte alignment; a forward given a prepared weight may take less), for the calling
// thread's IntraOpThreads() (the im2col paths lower one image per thread; Winograd float32 on AVX2
// keeps one tile block per thread, conv_winograd_avx2.h), so the tuner can filter on the
// `workspace` limit before running anything.
// Winograd F(4x4,3x3) is less accurate than the others in float32 (errors ~1e-4 relative instead
// of ~1e-6); every algorithm here is deterministic (same inputs and thread count, same bits).
//
// The GEMM paths (im2col_gemm, im2row_gemm, gemm_1x1), depthwise_direct NHWC and the NCHW16c
// algorithms can prepare their weight once for many forward calls (PrepareWeight: packed for the
// GEMM, where the AVX2 GEMM runs; transposed to one row per tap for the depthwise loops; reordered
// in blocks of 16 channels for NCHW16c); the others read it as it is.
//
// Run checks Supports first and throws mxlite::Error naming the algorithm, the direction and the
// geometry when the problem is not one it handles. Every direction overwrites its destination.
// Thread safety: algorithms are immutable singletons; Run is reentrant given distinct scratch
// spaces and destinations. Work is spread over the intra-op pool (ops/cpu/parallel.h).
#pragma once

#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/dtype.h"
#include "ops/conv_direction.h"
#include "ops/cpu/conv_gemm.h"
#include "ops/cpu/epilogue.h"
#include "ops/cpu/im2col.h"
#include "ops/tensor.h"

namespace mxlite::cpu {

using conv::ConvDirection;
using conv::ConvDirectionName;
std::string DescribeGeometry(const ConvGeometry& geometry);

// The buffers of one call; which are read and written depends on the direction:
//   forward:          reads data, weight, bias (may be null)  writes output
//   backward_data:    reads output_grad, weight               writes data_grad
//   backward_filter:  reads data, output_grad                 writes weight_grad
// Caller-owned; never retained after Run returns.
// Forward only: `residual` (when not null: a tensor of the output's shape and layout) is added to
// every output element after the bias, then each is clamped to [clamp_low, clamp_high] (a fused
// residual addition and relu / ReLU6 / clip: Convolution's `residual` input and act_min /
// act_max); the defaults add and clamp nothing. Algorithms whose store can take the residual
// (FusesResidual: the GEMM paths) add it there; for the others Run adds it, and then clamps, in a
// pass over the output after the kernel. Either way each element is ((sum + bias) + residual)
// clamped: the bits of a separate addition after the convolution. Other directions refuse both.
template <typename T>
struct ConvTensors {
  const T* data = nullptr;
  const T* weight = nullptr;
  const T* bias = nullptr;
  const T* output_grad = nullptr;
  T* output = nullptr;
  T* data_grad = nullptr;
  T* weight_grad = nullptr;
  T clamp_low = -std::numeric_limits<T>::infinity();
  T clamp_high = std::numeric_limits<T>::infinity();
  const T* residual = nullptr;
  // Forward only, optional: `weight` as this algorithm's PrepareWeight made it for this geometry
  // (read instead of packing `weight`; the results are the same bits).
  const PreparedConvWeight* prepared_weight = nullptr;

  // The forward output's clamp as an epilogue (no bias).
  Epilogue<T> OutputClamp() const { return Epilogue<T>::Clamp(clamp_low, clamp_high); }
};

class ConvAlgorithm {
 public:
  virtual ~ConvAlgorithm() = default;

  virtual std::string_view name() const = 0;
  virtual ConvLayout layout() const = 0;
  virtual bool deterministic() const { return true; }
  // Whether the forward adds ConvTensors::residual in its own store (else Run adds it after).
  virtual bool FusesResidual() const { return false; }
  // Whether the algorithm implements `direction` at all (on some shapes).
  virtual bool HasDirection(ConvDirection direction) const = 0;
  // Exactly the problems on which Run is correct (includes the layout and the direction).
  virtual bool Supports(const ConvGeometry& geometry, ConvDirection direction) const = 0;
  // Bytes Run takes from its ScratchSpace for this problem and element type (0 when unsupported).
  virtual size_t WorkspaceBytes(const ConvGeometry& geometry, ConvDirection direction,
                                DType dtype) const = 0;
  // The float32 forward's weight prepared for reuse (ConvTensors::prepared_weight), or null when
  // this algorithm reads the weight as it is on this geometry. Throws like Run when the forward
  // is not supported or the weight is null.
  std::unique_ptr<PreparedConvWeight> PrepareWeight(const ConvGeometry& geometry,
                                                    const float* weight) const;

  // Throws mxlite::Error when !Supports(geometry, direction) or a buffer it needs is null.
  void Run(ConvDirection direction, const ConvGeometry& geometry, const ConvTensors<float>& tensors,
           ScratchSpace& scratch) const;
  void Run(ConvDirection direction, const ConvGeometry& geometry,
           const ConvTensors<double>& tensors, ScratchSpace& scratch) const;

 protected:
  // PrepareWeight after its checks; the default prepares nothing.
  virtual std::unique_ptr<PreparedConvWeight> PrepareSupported(const ConvGeometry& geometry,
                                                               const float* weight) const;
  virtual void RunChecked(ConvDirection direction, const ConvGeometry& geometry,
                          const ConvTensors<float>& tensors, ScratchSpace& scratch) const = 0;
  virtual void RunChecked(ConvDirection direction, const ConvGeometry& geometry,
                          const ConvTensors<double>& tensors, ScratchSpace& scratch) const = 0;

 private:
  template <typename T>
  void CheckCall(ConvDirection direction, const ConvGeometry& geometry,
                 const ConvTensors<T>& tensors) const;
  // Run for either element type: the checks, then the kernel (and the residual pass it needs).
  template <typename T>
  void RunAny(ConvDirection direction, const ConvGeometry& geometry, const ConvTensors<T>& tensors,
              ScratchSpace& scratch) const;
  template <typename T>
  void RunWithResidual(const ConvGeometry& geometry, const ConvTensors<T>& tensors,
                       ScratchSpace& scratch) const;
};

// The revision of the CPU kernels as a set. Bump it with any change that moves an algorithm's
// speed (a new kernel behind an existing name, new blocking, a new candidate, a new way of timing
// them): the tuning DB keys CPU entries by it (TuningEnvironment::ForCpu), so timings of the old
// kernels are not trusted for the new ones. What each revision changed is in git's history of
// this line.
inline constexpr int kCpuConvKernelsRevision = 23;

// Every CPU algorithm, in a fixed order (im2col_gemm first: the reference and the fallback).
const std::vector<const ConvAlgorithm*>& CpuConvAlgorithms();
// The algorithm with this name and layout, or nullptr.
const ConvAlgorithm* FindCpuConvAlgorithm(std::string_view name, ConvLayout layout);

// The geometry checks shared by every algorithm (see "valid geometry" above).
bool IsValidConvGeometry(const ConvGeometry& geometry);

// ---- For the implementations (conv_algorithms.cc, conv_winograd.cc, conv_depthwise.cc, ...) ----

// Routes both element types to Derived::Compute<T>(direction, geometry, tensors, scratch), which
// is only called after the checks in Run.
template <typename Derived>
class ConvAlgorithmBase : public ConvAlgorithm {
 protected:
  void RunChecked(ConvDirection direction, const ConvGeometry& geometry,
                  const ConvTensors<float>& tensors, ScratchSpace& scratch) const override {
    static_cast<const Derived*>(this)->Compute(direction, geometry, tensors, scratch);
  }
  void RunChecked(ConvDirection direction, const ConvGeometry& geometry,
                  const ConvTensors<double>& tensors, ScratchSpace& scratch) const override {
    static_cast<const Derived*>(this)->Compute(direction, geometry, tensors, scratch);
  }
};

// Sums ScratchSpace requests as ScratchSpace::Get rounds them (64-byte multiples; 0 is free).
class WorkspaceTally {
 public:
  explicit WorkspaceTally(DType dtype) : element_(DTypeSize(dtype)) {}
  void Add(int64_t elements) {
    if (elements > 0) bytes_ += (static_cast<size_t>(elements) * element_ + 63) / 64 * 64;
  }
  size_t bytes() const { return bytes_; }

 private:
  size_t element_;
  size_t bytes_ = 0;
};

// The reordered float32 weight a forward reads: `t.prepared_weight`'s when given (its size checked
// against `size`; an error names `algorithm` and the geometry), else null.
const float* PreparedReorderedWeight(const ConvGeometry& g, const ConvTensors<float>& t,
                                     int64_t size, std::string_view algorithm);

// The weight as a forward that reorders it reads it: prepared (float32), else reordered by
// `reorder(g, t.weight, out)` into `size` elements of `scratch`.
template <typename T, typename Reorder>
const T* ReorderedWeight(const ConvGeometry& g, const ConvTensors<T>& t, int64_t size,
                         std::string_view algorithm, ScratchSpace& scratch, Reorder&& reorder) {
  if constexpr (std::is_same_v<T, float>) {
    if (const float* prepared = PreparedReorderedWeight(g, t, size, algorithm)) return prepared;
  }
  T* reordered = scratch.GetArray<T>(size);
  reorder(g, t.weight, reordered);
  return reordered;
}

// The singletons listed by CpuConvAlgorithms, defined next to their kernels.
const ConvAlgorithm& Winograd2x2Algorithm();                 // conv_winograd.cc
const ConvAlgorithm& Winograd4x4Algorithm();                 // conv_winograd.cc
const ConvAlgorithm& DepthwiseAlgorithm(ConvLayout layout);  // conv_depthwise.cc (any layout)
const ConvAlgorithm& DirectNchwAlgorithm();                  // conv_direct.cc
const ConvAlgorithm& DirectNhwcAlgorithm();                  // conv_direct_nhwc.cc
const ConvAlgorithm& DirectNchw16cAlgorithm();               // conv_nchw16c.cc
const ConvAlgorithm& DepthwiseNchw16cAlgorithm();            // conv_nchw16c.cc
const ConvAlgorithm& GroupedNchw16cAlgorithm();              // conv_nchw16c.cc
const ConvAlgorithm& GroupedNhwcAlgorithm();                 // conv_grouped_nhwc.cc

}  // namespace mxlite::cpu
