// ONNX's recurrent layers, RNN, GRU and LSTM (opsets 7-21), unrolled at load over the sequence
// (its length is part of the static input shape) into mxlite ops: one FullyConnected of every
// step's input at once (X W^T plus the biases), then per step a FullyConnected of the hidden state
// (H R^T), slices for the gates, the activations and element-wise arithmetic. Training and the
// GPU come with those ops. The ONNX equations (gates i, o, f, c for LSTM; z, r, h for GRU):
//   RNN   H = f(X Wi^T + H' Ri^T + Wbi + Rbi)
//   GRU   z = f(X Wz^T + H' Rz^T + Wbz + Rbz), r = f(... r ...),
//         h = g(X Wh^T + (r * H') Rh^T + Rbh + Wbh)         (linear_before_reset 0)
//         h = g(X Wh^T + r * (H' Rh^T + Rbh) + Wbh)         (linear_before_reset 1)
//         H = (1 - z) * h + z * H'
//   LSTM  i = f(X Wi^T + H' Ri^T + Pi * C' + Wbi + Rbi), f = f(... f ... Pf * C'),
//         c = g(X Wc^T + H' Rc^T + Wbc + Rbc), C = f * C' + i * c,
//         o = f(X Wo^T + H' Ro^T + Po * C + Wbo + Rbo), H = o * h(C)
// with `clip` bounding every activation's input, `input_forget` (LSTM) taking f = 1 - i,
// directions forward, reverse and bidirectional, `layout` 0 (sequence first) or 1 (batch first),
// the activations by name, in any case (Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu,
// ScaledTanh, HardSigmoid, Elu, Softsign, Softplus; activation_alpha / _beta consumed in order by
// those that take them; ScaledTanh has no defaults), and sequence_lens known at load: a batch
// element's steps past its length keep its state and output zeros (the reverse direction starts at
// its last step).
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "core/error.h"
#include "scheduler/onnx/onnx_converter.h"

namespace mxlite {
namespace {

enum class Cell { kRnn, kGru, kLstm };

int GatesOf(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }
int ActivationsOf(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3; }

// One activation with its parameters.
struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

// An activation's name as ONNX spells it, matched without regard to case (as ONNX Runtime
// reads them); an error naming the node for one mxlite does not know.
std::string CanonicalActivation(OnnxNode& node, const std::string& given) {
  static const char* const kKnown[] = {
      "Relu",       "Tanh",        "Sigmoid", "Affine",   "LeakyRelu", "ThresholdedRelu",
      "ScaledTanh", "HardSigmoid", "Elu",     "Softsign", "Softplus"};
  const auto lower = [](std::string text) {
    for (char& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return text;
  };
  for (const char* known : kKnown) {
    if (lower(known) == lower(given)) return known;
  }
  MX_THROW() << node.where() << ": activation '" << given << "' is not one of Relu, Tanh, "
             << "Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, "
             << "Softsign, Softplus";
}

// The node's activations per direction: the attribute's, or the defaults; activation_alpha /
// activation_beta go, in order, to the activations that take them.
std::vector<Activation> ActivationsFor(OnnxNode& node, Cell cell, int directions) {
  std::vector<std::string> names = node.attrs().Strings("activations");
  const int per_direction = ActivationsOf(cell);
  if (names.empty()) {
    const std::vector<std::string> defaults =
        cell == Cell::kRnn   ? std::vector<std::string>{"Tanh"}
        : cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                             : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int d = 0; d < directions; ++d)
      names.insert(names.end(), defaults.begin(), defaults.end());
  }
  MX_CHECK(static_cast<int>(names.size()) == per_direction * directions)
      << node.where() << ": " << names.size() << " activations for " << directions
      << " direction(s); expected " << per_direction * directions;
  const std::vector<float> alphas = node.attrs().Floats("activation_alpha");
  const std::vector<float> betas = node.attrs().Floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> out;
  for (const std::string& given : names) {
    const std::string name = CanonicalActivation(node, given);
    Activation a{name};
    const bool takes_alpha = name == "Affine" || name == "LeakyRelu" || name == "ThresholdedRelu" ||
                             name == "ScaledTanh" || name == "HardSigmoid" || name == "Elu";
    const bool takes_beta = name == "Affine" || name == "ScaledTanh" || name == "HardSigmoid";
    a.alpha = name == "LeakyRelu" ? 0.01 : name == "HardSigmoid" ? 0.2 : 1.0;
    a.beta = name == "HardSigmoid" ? 0.5 : 0.0;
    // ScaledTanh (alpha * tanh(beta * x)) has no defaults: without them it would be 0.
    MX_CHECK(name != "ScaledTanh" || (next_alpha < alphas.size() && next_beta < betas.size()))
        << node.where() << ": activation ScaledTanh needs its alpha and beta in "
        << "activation_alpha and activation_beta";
    if (takes_alpha && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (takes_beta && next_beta < betas.size()) a.beta = betas[next_beta++];
    out.push_back(a);
  }
  return out;
}

// Emits the node's unrolled ops; every emitted value gets a unique suffix.
class Unroller {
 public:
  explicit Unroller(OnnxNode& node) : node_(node) {}

  NodeEntry Emit(const std::string& op, const AttrText& attrs, const std::vector<NodeEntry>& in) {
    return node_.Emit(op, attrs, in, "_u" + std::to_string(next_++));
  }
  NodeEntry Slice(NodeEntry x, const Shape& shape, int axis, int64_t begin, int64_t end) {
    std::vector<int64_t> b(shape.ndim(), 0), e = shape.to_vector();
    b[axis] = begin;
    e[axis] = end;
    return Emit("slice", {{"begin", Tuple(b)}, {"end", Tuple(e)}}, {x});
  }
  NodeEntry Reshape(NodeEntry x, const std::vector<int64_t>& dims) {
    return Emit("Reshape", {{"shape", Tuple(dims)}}, {x});
  }
  NodeEntry Add(NodeEntry a, NodeEntry b) { return Emit("elemwise_add", {}, {a, b}); }
  NodeEntry Mul(NodeEntry a, NodeEntry b) { return Emit("elemwise_mul", {}, {a, b}); }
  NodeEntry Sub(NodeEntry a, NodeEntry b) { return Emit("elemwise_sub", {}, {a, b}); }
  NodeEntry BroadcastAdd(NodeEntry a, NodeEntry b) { return Emit("broadcast_add", {}, {a, b}); }
  NodeEntry Scalar(double value) {
    return node_.NewScalar("_c" + std::to_string(next_++), value, node_.InputDType(0));
  }
  // x W^T (+ bias) over the last axis.
  NodeEntry Linear(NodeEntry x, NodeEntry weight, int64_t outputs, const NodeEntry* bias) {
    std::vector<NodeEntry> in = {x, weight};
    if (bias != nullptr) in.push_back(*bias);
    return Emit("FullyConnected",
                {{"num_hidden", std::to_string(outputs)},
                 {"no_bias", bias == nullptr ? "true" : "false"},
                 {"flatten", "false"}},
                in);
  }
  NodeEntry Apply(const Activation& a, NodeEntry x, double clip) {
    if (clip > 0) {
      x = Emit("clip", {{"a_min", Number(-clip)}, {"a_max", Number(clip)}}, {x});
    }
    const std::string& n = a.name;
    if (n == "Sigmoid" || n == "Tanh" || n == "Relu" || n == "Softsign" || n == "Softplus") {
      const char* act = n == "Sigmoid"    ? "sigmoid"
                        : n == "Tanh"     ? "tanh"
                        : n == "Relu"     ? "relu"
                        : n == "Softsign" ? "softsign"
                                          : "softrelu";
      return Emit("Activation", {{"act_type", act}}, {x});
    }
    if (n == "LeakyRelu" || n == "Elu") {
      return Emit("LeakyReLU",
                  {{"act_type", n == "Elu" ? "elu" : "leaky"}, {"slope", Number(a.alpha)}}, {x});
    }
    if (n == "HardSigmoid") {
      return Emit("hard_sigmoid", {{"alpha", Number(a.alpha)}, {"beta", Number(a.beta)}}, {x});
    }
    if (n == "Affine") {
      return Emit("broadcast_add", {},
                  {Emit("broadcast_mul", {}, {x, Scalar(a.alpha)}), Scalar(a.beta)});
    }
    if (n == "ScaledTanh") {
      const NodeEntry inner = Emit("broadcast_mul", {}, {x, Scalar(a.beta)});
      return Emit("broadcast_mul", {},
                  {Emit("Activation", {{"act_type", "tanh"}}, {inner}), Scalar(a.alpha)});
    }
    // ThresholdedRelu, the one name left (ActivationsFor admits the known names only).
    const NodeEntry above = Emit("broadcast_greater", {}, {x, Scalar(a.alpha)});
    return Emit("where", {}, {above, x, Scalar(0.0)});
  }

 private:
  OnnxNode& node_;
  int next_ = 0;
};

void ConvertRecurrent(OnnxNode& node, Cell cell) {
  const std::string& where = node.where();
  const NodeAttributes& attrs = node.attrs();
  Unroller u(node);
  const int layout = static_cast<int>(attrs.Int("layout", 0));
  MX_CHECK(layout == 0 || layout == 1)
      << where << ": layout is " << layout << "; it must be 0 or 1";
  const std::string direction = attrs.String("direction", "forward");
  MX_CHECK(direction == "forward" || direction == "reverse" || direction == "bidirectional")
      << where << ": direction '" << direction << "' is not forward, reverse or bidirectional";
  const int directions = direction == "bidirectional" ? 2 : 1;
  const Shape x_shape = node.InputShape(0);
  MX_CHECK(x_shape.ndim() == 3) << where << ": X has shape " << x_shape << "; expected 3 axes";
  const int64_t seq = x_shape[layout == 0 ? 0 : 1], batch = x_shape[layout == 0 ? 1 : 0];
  const int64_t input = x_shape[2];
  const Shape w_shape = node.InputShape(1);
  const int gates = GatesOf(cell);
  MX_CHECK(w_shape.ndim() == 3 && w_shape[0] == directions && w_shape[1] % gates == 0 &&
           w_shape[2] == input)
      << where << ": W has shape " << w_shape << "; expected (" << directions << ", " << gates
      << " * hidden_size, " << input << ")";
  const int64_t hidden = w_shape[1] / gates;
  MX_CHECK(attrs.Int("hidden_size", hidden) == hidden)
      << where << ": hidden_size " << attrs.Int("hidden_size", hidden) << " differs from W's "
      << hidden;
  MX_CHECK(node.InputShape(2) == Shape({directions, gates * hidden, hidden}))
      << where << ": R has shape " << node.InputShape(2) << "; expected (" << directions << ", "
      << gates * hidden << ", " << hidden << ")";
  const std::vector<Activation> activations = ActivationsFor(node, cell, directions);
  const double clip = attrs.Float("clip", 0.0);
  const bool linear_before_reset = attrs.Int("linear_before_reset", 0) != 0;
  const bool input_forget = attrs.Int("input_forget", 0) != 0;
  const int64_t gh = gates * hidden;

  // Sequence-first X, and the lengths (all full when absent).
  NodeEntry x = node.Input(0);
  if (layout == 1) x = u.Emit("transpose", {{"axes", "(1,0,2)"}}, {x});
  std::vector<int64_t> lengths(static_cast<size_t>(batch), seq);
  if (node.has_input(4)) {
    lengths = node.RequireConstant(4, "sequence_lens").ToInt64s(where + " sequence_lens");
    MX_CHECK(static_cast<int64_t>(lengths.size()) == batch)
        << where << ": sequence_lens holds " << lengths.size() << " lengths for a batch of "
        << batch;
    for (int64_t length : lengths) {
      MX_CHECK(length >= 0 && length <= seq)
          << where << ": sequence length " << length << " is outside [0, " << seq << "]";
    }
  }
  const bool ragged =
      std::any_of(lengths.begin(), lengths.end(), [&](int64_t l) { return l != seq; });
  // The (batch, 1) mask of step t: 1 where the step is within the element's length.
  const auto step_mask = [&](int64_t t) {
    std::vector<double> mask(static_cast<size_t>(batch));
    for (int64_t b = 0; b < batch; ++b) mask[b] = t < lengths[b] ? 1.0 : 0.0;
    return node.NewConstant("_mask" + std::to_string(t),
                            HostTensorOf(node.InputDType(0), Shape({batch, 1}), mask, where));
  };
  // An optional (directions, batch, hidden) state input (layout 1: (batch, directions, hidden)),
  // direction d's part as (batch, hidden); zeros when absent.
  const auto initial_state = [&](int input_index, int d) {
    if (!node.has_input(input_index)) {
      return node.NewConstant(
          "_zero_state" + std::to_string(input_index) + "_" + std::to_string(d),
          HostTensorOf(node.InputDType(0), Shape({batch, hidden}),
                       std::vector<double>(static_cast<size_t>(batch * hidden), 0.0), where));
    }
    const Shape shape =
        layout == 0 ? Shape({directions, batch, hidden}) : Shape({batch, directions, hidden});
    MX_CHECK(node.InputShape(input_index) == shape)
        << where << ": an initial state has shape " << node.InputShape(input_index) << "; expected "
        << shape;
    return u.Reshape(u.Slice(node.Input(input_index), shape, layout == 0 ? 0 : 1, d, d + 1),
                     {batch, hidden});
  };

  std::vector<NodeEntry> y_per_direction, h_last, c_last;
  for (int d = 0; d < directions; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const Activation* act = &activations[static_cast<size_t>(d * ActivationsOf(cell))];
    const NodeEntry w = u.Reshape(u.Slice(node.Input(1), w_shape, 0, d, d + 1), {gh, input});
    const NodeEntry r = u.Reshape(
        u.Slice(node.Input(2), Shape({directions, gh, hidden}), 0, d, d + 1), {gh, hidden});
    // Biases: Wb + Rb go with X W^T, except GRU's Rbh, which sits inside the reset.
    NodeEntry input_bias, hidden_h_bias;
    const bool has_bias = node.has_input(3);
    if (has_bias) {
      const Shape b_shape({directions, 2 * gh});
      MX_CHECK(node.InputShape(3) == b_shape)
          << where << ": B has shape " << node.InputShape(3) << "; expected " << b_shape;
      const NodeEntry b = u.Reshape(u.Slice(node.Input(3), b_shape, 0, d, d + 1), {2 * gh});
      const NodeEntry wb = u.Slice(b, Shape({2 * gh}), 0, 0, gh);
      const NodeEntry rb = u.Slice(b, Shape({2 * gh}), 0, gh, 2 * gh);
      if (cell == Cell::kGru) {
        const NodeEntry rb_zr = u.Slice(rb, Shape({gh}), 0, 0, 2 * hidden);
        hidden_h_bias = u.Slice(rb, Shape({gh}), 0, 2 * hidden, gh);
        const NodeEntry zeros = node.NewConstant(
            "_zero_bias" + std::to_string(d),
            HostTensorOf(node.InputDType(0), Shape({hidden}),
                         std::vector<double>(static_cast<size_t>(hidden), 0.0), where));
        const NodeEntry rb_padded =
            u.Emit("Concat", {{"dim", "0"}, {"num_args", "2"}}, {rb_zr, zeros});
        input_bias = u.Add(wb, rb_padded);
      } else {
        input_bias = u.Add(wb, rb);
      }
    }
    const NodeEntry xw = u.Linear(x, w, gh, has_bias ? &input_bias : nullptr);  // (seq, batch, gh)
    NodeEntry h = initial_state(5, d);
    NodeEntry c = cell == Cell::kLstm ? initial_state(6, d) : NodeEntry{};
    NodeEntry p_i, p_o, p_f;
    const bool peepholes = cell == Cell::kLstm && node.has_input(7);
    if (peepholes) {
      const Shape p_shape({directions, 3 * hidden});
      MX_CHECK(node.InputShape(7) == p_shape)
          << where << ": P has shape " << node.InputShape(7) << "; expected " << p_shape;
      const NodeEntry p = u.Reshape(u.Slice(node.Input(7), p_shape, 0, d, d + 1), {3 * hidden});
      p_i = u.Slice(p, Shape({3 * hidden}), 0, 0, hidden);
      p_o = u.Slice(p, Shape({3 * hidden}), 0, hidden, 2 * hidden);
      p_f = u.Slice(p, Shape({3 * hidden}), 0, 2 * hidden, 3 * hidden);
    }
    // The GRU's recurrence splits R into the z, r rows and the h rows.
    NodeEntry r_zr, r_h;
    if (cell == Cell::kGru) {
      r_zr = u.Slice(r, Shape({gh, hidden}), 0, 0, 2 * hidden);
      r_h = u.Slice(r, Shape({gh, hidden}), 0, 2 * hidden, gh);
    }
    std::vector<NodeEntry> outputs(static_cast<size_t>(seq));
    for (int64_t k = 0; k < seq; ++k) {
      const int64_t t = reverse ? seq - 1 - k : k;
      const NodeEntry x_t =
          u.Reshape(u.Slice(xw, Shape({seq, batch, gh}), 0, t, t + 1), {batch, gh});
      const auto gate = [&](NodeEntry all, int64_t g, int64_t count) {
        return u.Slice(all, Shape({batch, count * hidden}), 1, g * hidden, (g + 1) * hidden);
      };
      NodeEntry h_new, c_new;
      if (cell == Cell::kRnn) {
        h_new = u.Apply(act[0], u.Add(x_t, u.Linear(h, r, gh, nullptr)), clip);
      } else if (cell == Cell::kGru) {
        const NodeEntry zr = u.Add(u.Slice(x_t, Shape({batch, gh}), 1, 0, 2 * hidden),
                                   u.Linear(h, r_zr, 2 * hidden, nullptr));
        const NodeEntry z = u.Apply(act[0], gate(zr, 0, 2), clip);
        const NodeEntry reset = u.Apply(act[0], gate(zr, 1, 2), clip);
        const NodeEntry x_h = gate(x_t, 2, 3);
        const NodeEntry* rbh = has_bias ? &hidden_h_bias : nullptr;
        const NodeEntry recurrent = linear_before_reset
                                        ? u.Mul(reset, u.Linear(h, r_h, hidden, rbh))
                                        : u.Linear(u.Mul(reset, h), r_h, hidden, rbh);
        const NodeEntry candidate = u.Apply(act[1], u.Add(x_h, recurrent), clip);
        // (1 - z) * h~ + z * H' = h~ + z * (H' - h~)
        h_new = u.Add(candidate, u.Mul(z, u.Sub(h, candidate)));
      } else {
        const NodeEntry all = u.Add(x_t, u.Linear(h, r, gh, nullptr));
        NodeEntry i_in = gate(all, 0, 4), o_in = gate(all, 1, 4), f_in = gate(all, 2, 4);
        if (peepholes) {
          i_in = u.Add(i_in, u.Emit("broadcast_mul", {}, {c, p_i}));
          f_in = u.Add(f_in, u.Emit("broadcast_mul", {}, {c, p_f}));
        }
        const NodeEntry i = u.Apply(act[0], i_in, clip);
        const NodeEntry f = input_forget ? u.Emit("broadcast_sub", {}, {u.Scalar(1.0), i})
                                         : u.Apply(act[0], f_in, clip);
        const NodeEntry candidate = u.Apply(act[1], gate(all, 3, 4), clip);
        c_new = u.Add(u.Mul(f, c), u.Mul(i, candidate));
        if (peepholes) o_in = u.Add(o_in, u.Emit("broadcast_mul", {}, {c_new, p_o}));
        const NodeEntry o = u.Apply(act[0], o_in, clip);
        h_new = u.Mul(o, u.Apply(act[2], c_new, 0.0));
      }
      if (ragged) {  // past its length an element keeps its state and outputs zeros
        const NodeEntry mask = step_mask(t);
        h_new = u.Emit("where", {}, {mask, h_new, h});
        if (cell == Cell::kLstm) c_new = u.Emit("where", {}, {mask, c_new, c});
        outputs[t] = u.Emit("where", {}, {mask, h_new, u.Scalar(0.0)});
      } else {
        outputs[t] = h_new;
      }
      h = h_new;
      if (cell == Cell::kLstm) c = c_new;
    }
    // Y of this direction: (seq, 1, batch, hidden).
    std::vector<NodeEntry> steps;
    for (const NodeEntry& out : outputs) steps.push_back(u.Reshape(out, {1, 1, batch, hidden}));
    y_per_direction.push_back(
        seq == 1 ? steps[0]
                 : u.Emit("Concat", {{"dim", "0"}, {"num_args", std::to_string(seq)}}, steps));
    h_last.push_back(u.Reshape(h, {1, batch, hidden}));
    if (cell == Cell::kLstm) c_last.push_back(u.Reshape(c, {1, batch, hidden}));
  }
  const auto join = [&](const std::vector<NodeEntry>& parts, int axis) {
    return parts.size() == 1
               ? parts[0]
               : u.Emit("Concat", {{"dim", std::to_string(axis)}, {"num_args", "2"}}, parts);
  };
  NodeEntry y = join(y_per_direction, 1);  // (seq, directions, batch, hidden)
  NodeEntry y_h = join(h_last, 0);         // (directions, batch, hidden)
  if (layout == 1) {
    y = u.Emit("transpose", {{"axes", "(2,0,1,3)"}}, {y});
    y_h = u.Emit("transpose", {{"axes", "(1,0,2)"}}, {y_h});
  }
  const auto wanted = [&](int i) {
    return i < node.num_outputs() && !node.proto().output(i).empty();
  };
  if (wanted(0)) node.SetOutput(0, y);
  if (wanted(1)) node.SetOutput(1, y_h);
  if (cell == Cell::kLstm && wanted(2)) {
    NodeEntry y_c = join(c_last, 0);
    if (layout == 1) y_c = u.Emit("transpose", {{"axes", "(1,0,2)"}}, {y_c});
    node.SetOutput(2, y_c);
  }
}

void ConvertRnn(OnnxNode& node) { ConvertRecurrent(node, Cell::kRnn); }
void ConvertGru(OnnxNode& node) { ConvertRecurrent(node, Cell::kGru); }
void ConvertLstm(OnnxNode& node) { ConvertRecurrent(node, Cell::kLstm); }

}  // namespace

MXLITE_REGISTER_ONNX_CONVERTER(RNN, 7, kMaxOnnxOpset, ConvertRnn);
MXLITE_REGISTER_ONNX_CONVERTER(GRU, 7, kMaxOnnxOpset, ConvertGru);
MXLITE_REGISTER_ONNX_CONVERTER(LSTM, 7, kMaxOnnxOpset, ConvertLstm);

}  // namespace mxlite
