#include "ops/cpu/depthwise_block.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "ops/cpu/cache_state.h"
#include "ops/cpu/conv_algorithms.h"
#include "ops/cpu/depthwise_rows.h"
#include "ops/cpu/parallel.h"

namespace mxlite::cpu {
namespace {

// A band's rows aim at this much workspace (ring of expanded rows + depthwise output band) so that
// it stays in a core's L2 with room for the weights and the rows being read.
constexpr size_t kBandTargetBytes = 384 * 1024;

int64_t Channels(const DepthwiseBlockGeometry& g) { return g.depthwise.in_channels; }

// Input rows one output row's windows span: (KH - 1) * dilate + 1.
int64_t WindowSpan(const ConvGeometry& g) { return (g.kernel_h - 1) * g.dilate_h + 1; }

// How a thread walks its rows: output rows per band, and the ring's rows (every input row a band
// reads, the rows it shares with the band before included).
struct BandPlan {
  int64_t band_rows = 1;
  int64_t ring_rows = 0;  // 0 without expand: the depthwise reads the block's input in place

  int64_t RingFloats(const DepthwiseBlockGeometry& g) const {
    return ring_rows * g.depthwise.in_w * Channels(g);
  }
  int64_t BandFloats(const DepthwiseBlockGeometry& g) const {
    return g.project ? band_rows * g.depthwise.out_w * Channels(g) : 0;
  }
  // Per thread, each part rounded to whole cache lines.
  int64_t ThreadFloats(const DepthwiseBlockGeometry& g) const {
    return RoundUpFloats(RingFloats(g)) + RoundUpFloats(BandFloats(g));
  }
  static int64_t RoundUpFloats(int64_t floats) { return (floats + 15) / 16 * 16; }
};

BandPlan PlanBands(const DepthwiseBlockGeometry& g) {
  const ConvGeometry& d = g.depthwise;
  const auto plan_for = [&](int64_t band_rows) {
    BandPlan plan;
    plan.band_rows = band_rows;
    plan.ring_rows = g.expand ? (band_rows - 1) * d.stride_h + WindowSpan(d) : 0;
    return plan;
  };
  BandPlan plan = plan_for(1);
  for (int64_t rows = 2; rows <= d.out_h; ++rows) {
    const BandPlan wider = plan_for(rows);
    if (static_cast<size_t>(wider.ThreadFloats(g)) * sizeof(float) > kBandTargetBytes) break;
    plan = wider;
  }
  return plan;
}

void RunPointwise(const PointwiseStage& stage, int64_t pixels, int64_t k, int64_t n,
                  const float* in, float* out) {
  if (stage.packed != nullptr) {
    Sgemm(Transpose::kNo, pixels, 1.0f, in, k, *stage.packed, 0.0f, out, n, stage.epilogue);
  } else {
    Sgemm(Transpose::kNo, Transpose::kYes, pixels, n, k, 1.0f, in, k, stage.weight, k, 0.0f, out, n,
          stage.epilogue);
  }
}

// One thread's walk over output rows [first, end) (row = n * out_h + oh), band by band.
class RowRun {
 public:
  RowRun(const DepthwiseBlockGeometry& g, const DepthwiseBlockTensors& t, const BandPlan& plan,
         float* workspace)
      : g_(g),
        d_(g.depthwise),
        t_(t),
        plan_(plan),
        ring_(workspace),
        band_(workspace + BandPlan::RoundUpFloats(plan.RingFloats(g))),
        input_rows_(static_cast<size_t>(d_.kernel_h)) {}

  void Run(int64_t first, int64_t end) {
    for (int64_t row = first; row < end;) {
      const int64_t image = row / d_.out_h, oh = row % d_.out_h;
      if (image != image_) {  // a new image: nothing of the ring is valid
        image_ = image;
        expanded_until_ = -1;
      }
      const int64_t band_end = std::min({end, row + plan_.band_rows, (image + 1) * d_.out_h});
      RunBand(oh, oh + (band_end - row));
      row = band_end;
    }
  }

 private:
  // Output rows [oh_begin, oh_end) of image_.
  void RunBand(int64_t oh_begin, int64_t oh_end) {
    if (g_.expand) ExpandRowsFor(oh_begin, oh_end);
    const int64_t channels = Channels(g_);
    for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
      float* y_row = g_.project ? band_ + (oh - oh_begin) * d_.out_w * channels
                                : t_.output + (image_ * d_.out_h + oh) * d_.out_w * channels;
      DepthwiseRowNhwc(d_, DepthwiseInputs(oh), t_.depthwise.by_tap, t_.depthwise.bias,
                       t_.depthwise.clamp, AllChannels(d_), y_row);
    }
    if (g_.project) {
      const int64_t first = (image_ * d_.out_h + oh_begin) * d_.out_w * g_.out_channels;
      PointwiseStage project = t_.project;
      if (t_.residual != nullptr) {
        project.epilogue.residual = t_.residual + first;
        project.epilogue.residual_stride = g_.out_channels;
      }
      RunPointwise(project, (oh_end - oh_begin) * d_.out_w, channels, g_.out_channels, band_,
                   t_.output + first);
    }
  }

  // Expands the input rows the band's windows read that the ring does not hold yet, in runs of
  // consecutive ring slots (one GEMM each).
  void ExpandRowsFor(int64_t oh_begin, int64_t oh_end) {
    const int64_t first_needed = std::max<int64_t>(0, oh_begin * d_.stride_h - d_.pad_h);
    const int64_t last_needed = std::min(
        d_.in_h - 1, (oh_end - 1) * d_.stride_h - d_.pad_h + (d_.kernel_h - 1) * d_.dilate_h);
    const int64_t row_floats = d_.in_w * Channels(g_);
    for (int64_t ih = std::max(first_needed, expanded_until_ + 1); ih <= last_needed;) {
      const int64_t slot = ih % plan_.ring_rows;
      const int64_t rows = std::min(last_needed - ih + 1, plan_.ring_rows - slot);
      const float* in = t_.data + (image_ * d_.in_h + ih) * d_.in_w * g_.in_channels;
      RunPointwise(t_.expand, rows * d_.in_w, g_.in_channels, Channels(g_), in,
                   ring_ + slot * row_floats);
      ih += rows;
    }
    expanded_until_ = std::max(expanded_until_, last_needed);
  }

  // The input row each kernel row of output row oh reads: in the ring, or in the block's input.
  const float* const* DepthwiseInputs(int64_t oh) {
    if (!g_.expand) {
      ChannelsLastInputRows(d_, t_.data, image_, oh, input_rows_.data());
      return input_rows_.data();
    }
    const int64_t row_floats = d_.in_w * Channels(g_);
    for (int64_t i = 0; i < d_.kernel_h; ++i) {
      const int64_t ih = oh * d_.stride_h - d_.pad_h + i * d_.dilate_h;
      input_rows_[i] =
          ih >= 0 && ih < d_.in_h ? ring_ + (ih % plan_.ring_rows) * row_floats : nullptr;
    }
    return input_rows_.data();
  }

  const DepthwiseBlockGeometry& g_;
  const ConvGeometry& d_;
  const DepthwiseBlockTensors& t_;
  const BandPlan& plan_;
  float* ring_;  // ring_rows expanded input rows; row ih in slot ih % ring_rows
  float* band_;  // band_rows depthwise output rows, the projection's input
  std::vector<const float*> input_rows_;
  int64_t image_ = -1;
  int64_t expanded_until_ = -1;  // the last input row of image_ expanded into the ring
};

}  // namespace

void CheckDepthwiseBlockGeometry(const DepthwiseBlockGeometry& g) {
  const ConvGeometry& d = g.depthwise;
  MX_CHECK(IsValidConvGeometry(d)) << "depthwise block: invalid depthwise geometry";
  MX_CHECK(d.layout == ConvLayout::kNHWC && d.groups == d.in_channels &&
           d.out_channels == d.in_channels)
      << "depthwise block: the depthwise convolution must be NHWC with groups == in channels == "
         "out channels (got groups "
      << d.groups << ", " << d.in_channels << " -> " << d.out_channels << " channels)";
  MX_CHECK(g.expand || g.project) << "depthwise block: neither an expansion nor a projection";
  MX_CHECK(g.expand || g.in_channels == d.in_channels)
      << "depthwise block: " << g.in_channels << " input channels without an expansion into "
      << d.in_channels;
  MX_CHECK(g.project || g.out_channels == d.out_channels)
      << "depthwise block: " << g.out_channels << " output channels without a projection from "
      << d.out_channels;
  MX_CHECK(g.in_channels > 0 && g.out_channels > 0)
      << "depthwise block: channel counts must be positive (" << g.in_channels << ", "
      << g.out_channels << ")";
}

size_t DepthwiseBlockFusionMinBytes() { return L2CacheBytesPerCore() / 2; }

size_t DepthwiseBlockWorkspaceBytes(const DepthwiseBlockGeometry& g, int threads) {
  const int64_t rows = g.depthwise.batch * g.depthwise.out_h;
  const int64_t runs = std::max<int64_t>(1, std::min<int64_t>(rows, threads));
  return static_cast<size_t>(runs * PlanBands(g).ThreadFloats(g)) * sizeof(float);
}

void DepthwiseBlockForward(const DepthwiseBlockGeometry& g, const DepthwiseBlockTensors& t,
                           ScratchSpace& scratch) {
  CheckDepthwiseBlockGeometry(g);
  MX_CHECK(t.residual == nullptr || g.project)
      << "depthwise block: a residual is added to the projection's output; this block has none";
  const ConvGeometry& d = g.depthwise;
  const BandPlan plan = PlanBands(g);
  const int64_t rows = d.batch * d.out_h;
  if (rows == 0) return;
  // Each thread one run of consecutive output rows, as the depthwise kernel alone does: the input
  // rows neighbouring output rows share stay in one core's caches.
  const int64_t runs = std::min<int64_t>(rows, IntraOpThreads());
  const int64_t thread_floats = plan.ThreadFloats(g);
  float* workspace = scratch.GetArray<float>(runs * thread_floats);
  ParallelFor(runs, [&](int64_t run) {
    RowRun walk(g, t, plan, workspace + run * thread_floats);
    walk.Run(rows * run / runs, rows * (run + 1) / runs);
  });
}

}  // namespace mxlite::cpu
