// ONNX RNN, GRU and LSTM (scheduler/onnx/convert_recurrent.cc): models built here, imported and
// run, against the ONNX equations evaluated directly in float64 (every direction, both layouts,
// initial states, biases, peepholes, clip, input_forget, GRU's linear_before_reset, other
// activations, and ragged sequence_lens), plus the errors that name the node.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "core/error.h"
#include "onnx/onnx_pb.h"
#include "scheduler/graph/executor.h"
#include "scheduler/onnx/onnx_import.h"

namespace mxlite {
namespace {

enum class Kind { kRnn, kGru, kLstm };

int Gates(Kind kind) { return kind == Kind::kRnn ? 1 : kind == Kind::kGru ? 3 : 4; }

struct Layer {
  Kind kind = Kind::kLstm;
  std::string direction = "forward";
  int layout = 0;
  int64_t seq = 4, batch = 3, input = 5, hidden = 3;
  bool bias = true, initial = true, peepholes = false, input_forget = false;
  bool linear_before_reset = false;
  double clip = 0;
  std::vector<int64_t> lengths;          // empty: all full
  std::vector<std::string> activations;  // empty: the defaults
  int directions() const { return direction == "bidirectional" ? 2 : 1; }
};

// Values in [-1, 1] from a fixed seed, per tensor name.
std::vector<double> Values(int64_t count, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> values(static_cast<size_t>(count));
  for (double& v : values) v = uniform(random);
  return values;
}

struct Tensors {
  std::vector<double> x, w, r, b, h0, c0, p;
};

Tensors TensorsOf(const Layer& l) {
  const int64_t d = l.directions(), gh = Gates(l.kind) * l.hidden;
  return {Values(l.seq * l.batch * l.input, 1), Values(d * gh * l.input, 2),
          Values(d * gh * l.hidden, 3),         Values(d * 2 * gh, 4),
          Values(d * l.batch * l.hidden, 5),    Values(d * l.batch * l.hidden, 6),
          Values(d * 3 * l.hidden, 7)};
}

double Act(const std::string& name, double x) {
  if (name == "Sigmoid" || name == "sigmoid") return 1 / (1 + std::exp(-x));
  if (name == "Tanh") return std::tanh(x);
  if (name == "Relu" || name == "RELU") return std::max(0.0, x);
  if (name == "Softsign") return x / (1 + std::abs(x));
  if (name == "HardSigmoid") return std::clamp(0.2 * x + 0.5, 0.0, 1.0);
  ADD_FAILURE() << "no reference for " << name;
  return 0;
}

// The ONNX equations; outputs Y, Y_h (and Y_c) in the layer's layout.
std::vector<std::vector<double>> Reference(const Layer& l, const Tensors& t) {
  const int64_t S = l.seq, B = l.batch, I = l.input, H = l.hidden, D = l.directions();
  const int G = Gates(l.kind);
  std::vector<std::string> acts = l.activations;
  if (acts.empty()) {
    for (int64_t d = 0; d < D; ++d) {
      if (l.kind == Kind::kRnn) acts.push_back("Tanh");
      if (l.kind == Kind::kGru) acts.insert(acts.end(), {"Sigmoid", "Tanh"});
      if (l.kind == Kind::kLstm) acts.insert(acts.end(), {"Sigmoid", "Tanh", "Tanh"});
    }
  }
  const size_t per = acts.size() / D;
  const auto x_at = [&](int64_t s, int64_t b, int64_t i) {
    return l.layout == 0 ? t.x[(s * B + b) * I + i] : t.x[(b * S + s) * I + i];
  };
  const auto state_at = [&](const std::vector<double>& v, int64_t d, int64_t b, int64_t h) {
    return l.layout == 0 ? v[(d * B + b) * H + h] : v[(b * D + d) * H + h];
  };
  const auto clip = [&](double v) { return l.clip > 0 ? std::clamp(v, -l.clip, l.clip) : v; };
  std::vector<double> y(S * D * B * H, 0.0), yh(D * B * H), yc(D * B * H);
  for (int64_t d = 0; d < D; ++d) {
    const bool reverse = l.direction == "reverse" || d == 1;
    const auto W = [&](int64_t g, int64_t i) { return t.w[(d * G * H + g) * I + i]; };
    const auto R = [&](int64_t g, int64_t h) { return t.r[(d * G * H + g) * H + h]; };
    const auto Wb = [&](int64_t g) { return l.bias ? t.b[d * 2 * G * H + g] : 0.0; };
    const auto Rb = [&](int64_t g) { return l.bias ? t.b[d * 2 * G * H + G * H + g] : 0.0; };
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> h(H), c(H);
      for (int64_t k = 0; k < H; ++k) {
        h[k] = l.initial ? state_at(t.h0, d, b, k) : 0.0;
        c[k] = l.initial ? state_at(t.c0, d, b, k) : 0.0;
      }
      const int64_t length = l.lengths.empty() ? S : l.lengths[b];
      for (int64_t step = 0; step < length; ++step) {
        const int64_t s = reverse ? length - 1 - step : step;
        // Pre-activations of every gate row: X W^T + Wb (+ H R^T + Rb, except GRU's h rows).
        std::vector<double> xw(G * H), hr(G * H);
        for (int64_t g = 0; g < G * H; ++g) {
          xw[g] = Wb(g);
          for (int64_t i = 0; i < I; ++i) xw[g] += x_at(s, b, i) * W(g, i);
          hr[g] = Rb(g);
          for (int64_t k = 0; k < H; ++k) hr[g] += h[k] * R(g, k);
        }
        std::vector<double> hn(H), cn(H);
        if (l.kind == Kind::kRnn) {
          for (int64_t k = 0; k < H; ++k) hn[k] = Act(acts[d * per], clip(xw[k] + hr[k]));
        } else if (l.kind == Kind::kGru) {
          std::vector<double> z(H), r(H), rh(H);
          for (int64_t k = 0; k < H; ++k) {
            z[k] = Act(acts[d * per], clip(xw[k] + hr[k]));
            r[k] = Act(acts[d * per], clip(xw[H + k] + hr[H + k]));
            rh[k] = r[k] * h[k];
          }
          for (int64_t k = 0; k < H; ++k) {
            double recurrent = Rb(2 * H + k);
            if (l.linear_before_reset) {
              recurrent = r[k] * hr[2 * H + k];
            } else {
              for (int64_t j = 0; j < H; ++j) recurrent += rh[j] * R(2 * H + k, j);
            }
            const double cand = Act(acts[d * per + 1], clip(xw[2 * H + k] + recurrent));
            hn[k] = (1 - z[k]) * cand + z[k] * h[k];
          }
        } else {
          const auto P = [&](int gate, int64_t k) {
            return l.peepholes ? t.p[d * 3 * H + gate * H + k] : 0.0;
          };
          for (int64_t k = 0; k < H; ++k) {
            const double i = Act(acts[d * per], clip(xw[k] + hr[k] + P(0, k) * c[k]));
            const double f =
                l.input_forget
                    ? 1 - i
                    : Act(acts[d * per], clip(xw[2 * H + k] + hr[2 * H + k] + P(2, k) * c[k]));
            const double cand = Act(acts[d * per + 1], clip(xw[3 * H + k] + hr[3 * H + k]));
            cn[k] = f * c[k] + i * cand;
            const double o = Act(acts[d * per], clip(xw[H + k] + hr[H + k] + P(1, k) * cn[k]));
            hn[k] = o * Act(acts[d * per + 2], cn[k]);
          }
        }
        h = hn;
        if (l.kind == Kind::kLstm) c = cn;
        for (int64_t k = 0; k < H; ++k) {
          const int64_t at =
              l.layout == 0 ? ((s * D + d) * B + b) * H + k : ((b * S + s) * D + d) * H + k;
          y[at] = h[k];
        }
      }
      for (int64_t k = 0; k < H; ++k) {
        const int64_t at = l.layout == 0 ? (d * B + b) * H + k : (b * D + d) * H + k;
        yh[at] = h[k];
        yc[at] = c[k];
      }
    }
  }
  if (l.kind == Kind::kLstm) return {y, yh, yc};
  return {y, yh};
}

void AddInitializer(onnx::GraphProto* graph, const std::string& name,
                    const std::vector<int64_t>& dims, const std::vector<double>& values,
                    int type = onnx::TensorProto::FLOAT) {
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(type);
  for (int64_t dim : dims) tensor->add_dims(dim);
  for (double v : values) {
    if (type == onnx::TensorProto::FLOAT)
      tensor->add_float_data(static_cast<float>(v));
    else
      tensor->add_int32_data(static_cast<int32_t>(v));
  }
}

onnx::ModelProto ModelOf(const Layer& l, const Tensors& t) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(14);
  onnx::GraphProto* graph = model.mutable_graph();
  const int64_t D = l.directions(), GH = Gates(l.kind) * l.hidden;
  onnx::ValueInfoProto* input = graph->add_input();
  input->set_name("x");
  auto* type = input->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : l.layout == 0 ? std::vector<int64_t>{l.seq, l.batch, l.input}
                                   : std::vector<int64_t>{l.batch, l.seq, l.input}) {
    type->mutable_shape()->add_dim()->set_dim_value(dim);
  }
  AddInitializer(graph, "w", {D, GH, l.input}, t.w);
  AddInitializer(graph, "r", {D, GH, l.hidden}, t.r);
  std::vector<std::string> inputs = {"x", "w", "r", l.bias ? "b" : ""};
  if (l.bias) AddInitializer(graph, "b", {D, 2 * GH}, t.b);
  inputs.push_back(l.lengths.empty() ? "" : "lengths");
  if (!l.lengths.empty()) {
    AddInitializer(graph, "lengths", {l.batch},
                   std::vector<double>(l.lengths.begin(), l.lengths.end()),
                   onnx::TensorProto::INT32);
  }
  const std::vector<int64_t> state = l.layout == 0 ? std::vector<int64_t>{D, l.batch, l.hidden}
                                                   : std::vector<int64_t>{l.batch, D, l.hidden};
  inputs.push_back(l.initial ? "h0" : "");
  if (l.initial) AddInitializer(graph, "h0", state, t.h0);
  if (l.kind == Kind::kLstm) {
    inputs.push_back(l.initial ? "c0" : "");
    if (l.initial) AddInitializer(graph, "c0", state, t.c0);
    inputs.push_back(l.peepholes ? "p" : "");
    if (l.peepholes) AddInitializer(graph, "p", {D, 3 * l.hidden}, t.p);
  }
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
  std::vector<std::string> outputs = {"y", "y_h"};
  if (l.kind == Kind::kLstm) outputs.push_back("y_c");
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type(l.kind == Kind::kRnn ? "RNN" : l.kind == Kind::kGru ? "GRU" : "LSTM");
  node->set_name("cell");
  for (const std::string& name : inputs) node->add_input(name);
  for (const std::string& name : outputs) node->add_output(name);
  const auto attr_int = [&](const char* name, int64_t value) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  };
  attr_int("hidden_size", l.hidden);
  attr_int("layout", l.layout);
  if (l.kind == Kind::kLstm) attr_int("input_forget", l.input_forget);
  if (l.kind == Kind::kGru) attr_int("linear_before_reset", l.linear_before_reset);
  auto* dir = node->add_attribute();
  dir->set_name("direction");
  dir->set_type(onnx::AttributeProto::STRING);
  dir->set_s(l.direction);
  if (l.clip > 0) {
    auto* a = node->add_attribute();
    a->set_name("clip");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(static_cast<float>(l.clip));
  }
  if (!l.activations.empty()) {
    auto* a = node->add_attribute();
    a->set_name("activations");
    a->set_type(onnx::AttributeProto::STRINGS);
    for (const std::string& name : l.activations) a->add_strings(name);
  }
  for (const std::string& name : outputs) graph->add_output()->set_name(name);
  return model;
}

// Imports and runs the layer; compares every output with the reference (float32 weights: the
// reference reads the same rounded values).
void Check(Layer l) {
  Tensors t = TensorsOf(l);
  for (auto* v : {&t.x, &t.w, &t.r, &t.b, &t.h0, &t.c0, &t.p}) {
    for (double& e : *v) e = static_cast<float>(e);
  }
  const ImportedModel model =
      ImportOnnxBytes(ModelOf(l, t).SerializeAsString(), "cell.onnx", "", {});
  BindOptions bind{.ctx = Context::CPU(), .arrays = ParameterArrays(model, Context::CPU())};
  const HostTensor x = HostTensor::From(
      std::vector<float>(t.x.begin(), t.x.end()),
      l.layout == 0 ? Shape({l.seq, l.batch, l.input}) : Shape({l.batch, l.seq, l.input}));
  bind.arrays[model.inputs.at("x")] = ToNDArray(x, Context::CPU());
  auto executor = Executor::Bind(model.graph, bind);
  executor->Forward(/*is_train=*/false);
  const auto want = Reference(l, t);
  ASSERT_EQ(executor->outputs().size(), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    const NDArray& out = executor->outputs()[o];
    std::vector<float> got(static_cast<size_t>(out.shape().size()));
    ASSERT_EQ(got.size(), want[o].size()) << "output " << o;
    out.SyncCopyToCPU(got.data(), got.size() * sizeof(float));
    for (size_t i = 0; i < want[o].size(); ++i) {
      EXPECT_NEAR(got[i], want[o][i], 2e-5) << "output " << o << " element " << i;
    }
  }
}

TEST(OnnxRecurrent, EveryDirectionAndLayoutMatchesTheEquations) {
  for (Kind kind : {Kind::kRnn, Kind::kGru, Kind::kLstm}) {
    for (const char* direction : {"forward", "reverse", "bidirectional"}) {
      for (int layout : {0, 1}) {
        SCOPED_TRACE(std::to_string(static_cast<int>(kind)) + " " + direction + " layout " +
                     std::to_string(layout));
        Layer l;
        l.kind = kind;
        l.direction = direction;
        l.layout = layout;
        Check(l);
        l.bias = l.initial = false;  // zero biases and states
        Check(l);
      }
    }
  }
}

TEST(OnnxRecurrent, OptionsMatchTheEquations) {
  Layer lstm;
  lstm.peepholes = true;
  lstm.direction = "bidirectional";
  Check(lstm);
  lstm.input_forget = true;
  lstm.clip = 0.4;
  Check(lstm);
  Layer gru;
  gru.kind = Kind::kGru;
  gru.linear_before_reset = true;
  gru.direction = "bidirectional";
  Check(gru);
  gru.activations = {"HardSigmoid", "Softsign", "sigmoid", "RELU"};  // names in any case
  Check(gru);
  Layer rnn;
  rnn.kind = Kind::kRnn;
  rnn.activations = {"Relu"};
  rnn.clip = 0.5;
  Check(rnn);
}

// Elements past their length keep their state and output zeros; reverse starts at the last step.
TEST(OnnxRecurrent, RaggedSequenceLengths) {
  for (Kind kind : {Kind::kRnn, Kind::kGru, Kind::kLstm}) {
    for (const char* direction : {"forward", "bidirectional"}) {
      Layer l;
      l.kind = kind;
      l.direction = direction;
      l.seq = 5;
      l.lengths = {5, 2, 0};
      Check(l);
      l.layout = 1;
      Check(l);
    }
  }
}

TEST(OnnxRecurrent, ErrorsNameTheNode) {
  Layer l;
  Tensors t = TensorsOf(l);
  onnx::ModelProto model = ModelOf(l, t);
  auto* node = model.mutable_graph()->mutable_node(0);
  auto* dir = node->mutable_attribute(node->attribute_size() - 1);
  dir->set_s("sideways");
  try {
    ImportOnnxBytes(model.SerializeAsString(), "cell.onnx", "", {});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("'cell' (LSTM)"), std::string::npos) << message;
    EXPECT_NE(message.find("direction 'sideways'"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace mxlite
