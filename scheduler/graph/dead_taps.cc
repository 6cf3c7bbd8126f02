#include "scheduler/graph/dead_taps.h"

#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "ops/conv_attributes.h"
#include "scheduler/graph/graph_rewrite.h"

namespace mxlite {
namespace {

// The live taps of one axis as a half-open range, and the padding the trimmed kernel needs.
struct LiveTaps {
  int64_t first = 0, end = 0;  // taps [first, end)
  int64_t pad = 0;
};

// The taps of a kernel of `kernel` taps that read data (extent `in`) for some output, when the
// trimmed kernel keeps even padding; nullopt when the axis is best left as it is.
std::optional<LiveTaps> LiveTapsOfAxis(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                                       int64_t dilation) {
  const int64_t out = (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
  if (out < 1) return std::nullopt;
  // Tap k reads positions k * dilation - pad + o * stride for o in [0, out).
  auto live = [&](int64_t k) {
    const int64_t lowest = k * dilation - pad;
    return lowest <= in - 1 && lowest + (out - 1) * stride >= 0;
  };
  LiveTaps taps{0, kernel, pad};
  while (taps.first < kernel && !live(taps.first)) ++taps.first;
  while (taps.end > taps.first && !live(taps.end - 1)) --taps.end;
  if (taps.first == taps.end) return std::nullopt;  // no live tap: the output is the bias
  const int64_t pad_begin = pad - taps.first * dilation;
  const int64_t pad_end = pad - (kernel - taps.end) * dilation;
  if (pad_begin != pad_end || pad_begin < 0) return std::nullopt;
  taps.pad = pad_begin;
  return taps;
}

// Where the spatial axes sit in the data and weight shapes of `window`'s layout; nullopt for
// layouts the pass leaves alone.
std::optional<int> FirstSpatialAxis(const ConvWindow& window) {
  const std::string& layout = window.layout;
  if (layout == "NCW" || layout == "NCHW" || layout == "NCDHW") return 2;
  if (layout == "NWC" || layout == "NHWC") return 1;
  return std::nullopt;
}

struct Trim {
  std::vector<LiveTaps> axes;  // per spatial axis
  int first_axis = 2;
};

// The trim of Convolution `node` reading data of `data` shape, or nullopt when no tap is dead
// (or none can go).
std::optional<Trim> TrimOf(const Node& node, const Shape& data) {
  const ConvWindow window = ReadConvWindow(node.attrs, "Convolution " + node.name);
  const std::optional<int> first_axis = FirstSpatialAxis(window);
  if (!first_axis || data.ndim() != window.rank + 2) return std::nullopt;
  Trim trim{{}, *first_axis};
  bool trims = false;
  for (int a = 0; a < window.rank; ++a) {
    const int64_t in = data[*first_axis + a];
    std::optional<LiveTaps> taps =
        LiveTapsOfAxis(in, window.kernel[a], window.stride[a], window.pad[a], window.dilate[a]);
    if (!taps) taps = LiveTaps{0, window.kernel[a], window.pad[a]};  // kept whole
    trims |= taps->end - taps->first < window.kernel[a];
    trim.axes.push_back(*taps);
  }
  if (!trims) return std::nullopt;
  return trim;
}

std::vector<int64_t> Kernel(const Trim& trim) {
  std::vector<int64_t> kernel;
  for (const LiveTaps& taps : trim.axes) kernel.push_back(taps.end - taps.first);
  return kernel;
}

// The slice of `weight` (its shape) that holds the live taps.
std::map<std::string, std::string> WeightSlice(const Trim& trim, const Shape& weight) {
  std::vector<int64_t> begin(static_cast<size_t>(weight.ndim()), 0);
  std::vector<int64_t> end = weight.to_vector();
  for (size_t a = 0; a < trim.axes.size(); ++a) {
    begin[trim.first_axis + a] = trim.axes[a].first;
    end[trim.first_axis + a] = trim.axes[a].end;
  }
  return {{"begin", FormatIntTuple(begin)}, {"end", FormatIntTuple(end)}};
}

// A name for the slice of `convolution`'s weight that `graph` does not use.
std::string SliceName(const Graph& graph, const std::string& convolution) {
  std::string name = convolution + "_live_taps";
  for (int i = 2; graph.HasName(name); ++i) name = convolution + "_live_taps" + std::to_string(i);
  return name;
}

}  // namespace

DeadTapsResult TrimDeadKernelTaps(const Graph& graph, const GraphShapes& shapes) {
  std::map<int, Trim> trims;  // convolution id -> its trim
  std::set<int> sliced_variables;
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    if (node.is_variable() || !node.op->fusion.convolution || node.inputs.size() < 2) continue;
    std::optional<Trim> trim = TrimOf(node, shapes.of(node.inputs[0]));
    if (!trim) continue;
    trims.emplace(id, std::move(*trim));
    if (graph.node(node.inputs[1].node).is_variable()) sliced_variables.insert(node.inputs[1].node);
  }
  DeadTapsResult result;
  if (trims.empty()) {
    result.graph = graph;
    return result;
  }
  GraphRewrite rewrite(graph);
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    // A weight read through its slice no longer has its shape and type inferred by the
    // convolution: it declares them.
    if (sliced_variables.count(id) != 0) {
      rewrite.CopyVariable(id, shapes.of(NodeEntry{id, 0}), shapes.dtype_of(NodeEntry{id, 0}));
      continue;
    }
    const auto trim = trims.find(id);
    if (trim == trims.end()) {
      rewrite.Copy(id);
      continue;
    }
    const ConvWindow window = ReadConvWindow(node.attrs, "Convolution " + node.name);
    const int slice = rewrite.AddNew("slice", SliceName(graph, node.name),
                                     WeightSlice(trim->second, shapes.of(node.inputs[1])),
                                     {rewrite.Map(node.inputs[1])});
    std::vector<NodeEntry> inputs;
    for (const NodeEntry& input : node.inputs) inputs.push_back(rewrite.Map(input));
    inputs[1] = NodeEntry{slice, 0};
    std::map<std::string, std::string> attrs = node.attr_text;
    std::vector<int64_t> pad;
    for (const LiveTaps& taps : trim->second.axes) pad.push_back(taps.pad);
    attrs["kernel"] = FormatIntTuple(Kernel(trim->second));
    attrs["pad"] = FormatIntTuple(pad);
    rewrite.ReadAsNew(id, rewrite.AddNew(node.op->name, node.name, attrs, inputs));
    result.trimmed.push_back({node.name, window.kernel, Kernel(trim->second)});
  }
  result.graph = rewrite.Finish();
  return result;
}

std::string FormatTrimmedTaps(const std::vector<TrimmedConvolution>& trimmed, bool per_layer) {
  std::ostringstream out;
  out << "trimmed dead kernel taps of " << trimmed.size() << " convolution"
      << (trimmed.size() == 1 ? "" : "s") << " (MXNET_CONV_TRIM_DEAD_TAPS)";
  if (per_layer) {
    for (const TrimmedConvolution& t : trimmed) {
      out << "\n  " << t.convolution << ": kernel " << FormatIntTuple(t.kernel_before) << " -> "
          << FormatIntTuple(t.kernel_after);
    }
  }
  return out.str();
}

}  // namespace mxlite
