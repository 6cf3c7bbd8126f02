// ONNX's Einsum of one or two operands, as the shapes exporters write it (attention scores
// "bhid,bhjd->bhij", MaxViT's "bghid,bghjd->bghij", transposes, sums): labels only one operand
// has and the output lacks are summed out first (mxlite's sum); two operands then become one
// MatMul over (batch..., M, K) x (batch..., K, N), the batch labels being those both operands and
// the output share (broadcast where one operand has extent 1), K the labels summed over, M and N
// the labels of one operand kept in the output, with a transpose and a reshape before and after
// where the order needs them. A label repeated within a term ("ii->i") is its diagonal, taken
// first (a strided slice of the two axes flattened). An ellipsis stands for the same leading axes
// in every term. Errors name the node: more than two operands, extents that do not match.
#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "scheduler/onnx/onnx_converter.h"

namespace mxlite {
namespace {

// One term's labels, an ellipsis spelled out as the characters '0', '1', ... (from the right,
// so broadcast leading axes share labels across terms).
using Labels = std::string;

// A term with its ellipsis (if any) spelled out for `rank` axes.
Labels SpellOut(const std::string& term, int rank, const std::string& where) {
  const size_t dots = term.find("...");
  Labels labels;
  if (dots == std::string::npos) {
    labels = term;
  } else {
    const std::string rest = term.substr(0, dots) + term.substr(dots + 3);
    const int covered = rank - static_cast<int>(rest.size());
    MX_CHECK(covered >= 0) << where << ": term '" << term << "' has more labels than its operand "
                           << "has axes (" << rank << ")";
    std::string ellipsis;
    for (int i = covered; i > 0; --i) ellipsis += static_cast<char>('0' + i - 1);
    labels = term.substr(0, dots) + ellipsis + term.substr(dots + 3);
  }
  MX_CHECK(static_cast<int>(labels.size()) == rank)
      << where << ": term '" << term << "' names " << labels.size() << " axes but its operand has "
      << rank;
  return labels;
}

// One operand as the converter reshapes it: its graph value, labels and extents.
struct Operand {
  NodeEntry value;
  Labels labels;
  std::vector<int64_t> extents;

  int64_t ExtentOf(char label) const { return extents[labels.find(label)]; }
};

bool Has(const Labels& labels, char label) { return labels.find(label) != std::string::npos; }

// `operand` with the labels not in `keep` summed out.
Operand SumOut(OnnxNode& node, Operand operand, const Labels& keep, const std::string& suffix) {
  std::vector<int64_t> axes;
  Labels labels;
  std::vector<int64_t> extents;
  for (size_t i = 0; i < operand.labels.size(); ++i) {
    if (Has(keep, operand.labels[i])) {
      labels += operand.labels[i];
      extents.push_back(operand.extents[i]);
    } else {
      axes.push_back(static_cast<int64_t>(i));
    }
  }
  if (axes.empty()) return operand;
  operand.value =
      node.Emit("sum", {{"axis", Tuple(axes)}, {"keepdims", "false"}}, {operand.value}, suffix);
  operand.labels = labels;
  operand.extents = extents;
  return operand;
}

Operand Arrange(OnnxNode& node, Operand operand, const Labels& order, const std::string& suffix);

// `operand` with every label that repeats within it (a diagonal, "ii->i") taken once: the two
// axes moved last, flattened to n * n and sliced with step n + 1.
Operand Diagonals(OnnxNode& node, Operand operand, const std::string& suffix) {
  for (int round = 0;; ++round) {
    size_t first = std::string::npos, second = std::string::npos;
    for (size_t i = 0; i < operand.labels.size() && second == std::string::npos; ++i) {
      const size_t again = operand.labels.find(operand.labels[i], i + 1);
      if (again != std::string::npos) first = i, second = again;
    }
    if (second == std::string::npos) return operand;
    const char label = operand.labels[first];
    const int64_t n = operand.extents[first];
    MX_CHECK(operand.extents[second] == n)
        << node.where() << ": label '" << label << "' repeats with extents " << n << " and "
        << operand.extents[second];
    // Move the pair last: Arrange takes distinct labels, so the second one goes as a stand-in.
    const char stand_in = '\x01';
    Labels renamed = operand.labels;
    renamed[second] = stand_in;
    Labels order;
    for (char l : renamed) {
      if (l != label && l != stand_in) order += l;
    }
    order += label;
    order += stand_in;
    operand.labels = renamed;
    const std::string step = suffix + "_diagonal" + std::to_string(round);
    operand = Arrange(node, operand, order, step + "_moved");
    std::vector<int64_t> flat(operand.extents.begin(), operand.extents.end() - 2);
    flat.push_back(n * n);
    const NodeEntry flattened =
        node.Emit("Reshape", {{"shape", Tuple(flat)}}, {operand.value}, step + "_flat");
    std::vector<int64_t> begin(flat.size(), 0), stride(flat.size(), 1);
    stride.back() = n + 1;
    operand.value =
        node.Emit("slice", {{"begin", Tuple(begin)}, {"end", Tuple(flat)}, {"step", Tuple(stride)}},
                  {flattened}, step);
    operand.labels = order.substr(0, order.size() - 1);
    operand.extents.pop_back();
  }
}

// `operand` with its axes in the order of `order` (a permutation of its labels).
Operand Arrange(OnnxNode& node, Operand operand, const Labels& order, const std::string& suffix) {
  if (operand.labels == order) return operand;
  std::vector<int64_t> axes;
  std::vector<int64_t> extents;
  for (char label : order) {
    axes.push_back(static_cast<int64_t>(operand.labels.find(label)));
    extents.push_back(operand.ExtentOf(label));
  }
  operand.value = node.Emit("transpose", {{"axes", Tuple(axes)}}, {operand.value}, suffix);
  operand.labels = order;
  operand.extents = extents;
  return operand;
}

NodeEntry ReshapeTo(OnnxNode& node, NodeEntry value, const std::vector<int64_t>& current,
                    const std::vector<int64_t>& target, const std::string& suffix) {
  if (current == target) return value;
  for (int64_t extent : target) {
    MX_CHECK(extent > 0) << node.where() << ": Einsum over empty axes is not supported";
  }
  return node.Emit("Reshape", {{"shape", Tuple(target)}}, {value}, suffix);
}

int64_t Product(const Operand& operand, const Labels& labels) {
  int64_t product = 1;
  for (char label : labels) product *= operand.ExtentOf(label);
  return product;
}

// Two operands as one MatMul; returns the result with its labels and extents.
Operand Contract(OnnxNode& node, Operand a, Operand b, const Labels& output) {
  Labels batch, free_a, free_b, summed;
  for (char label : output) {
    if (Has(a.labels, label) && Has(b.labels, label))
      batch += label;
    else if (Has(a.labels, label))
      free_a += label;
    else if (Has(b.labels, label))
      free_b += label;
  }
  for (char label : a.labels) {
    if (Has(b.labels, label) && !Has(output, label)) summed += label;
  }
  for (char label : summed) {
    MX_CHECK(a.ExtentOf(label) == b.ExtentOf(label))
        << node.where() << ": label '" << label << "' has extent " << a.ExtentOf(label)
        << " in one operand and " << b.ExtentOf(label) << " in the other";
  }
  std::vector<int64_t> batch_a, batch_b, batch_out;
  for (char label : batch) {
    const int64_t x = a.ExtentOf(label), y = b.ExtentOf(label);
    MX_CHECK(x == y || x == 1 || y == 1)
        << node.where() << ": label '" << label << "' has extents " << x << " and " << y;
    batch_a.push_back(x);
    batch_b.push_back(y);
    batch_out.push_back(std::max(x, y));
  }
  a = Arrange(node, a, batch + free_a + summed, "_a");
  b = Arrange(node, b, batch + summed + free_b, "_b");
  const int64_t m = Product(a, free_a), k = Product(a, summed), n = Product(b, free_b);
  std::vector<int64_t> shape_a = batch_a, shape_b = batch_b;
  shape_a.insert(shape_a.end(), {m, k});
  shape_b.insert(shape_b.end(), {k, n});
  const NodeEntry product = node.Emit("MatMul", {},
                                      {ReshapeTo(node, a.value, a.extents, shape_a, "_a_matrix"),
                                       ReshapeTo(node, b.value, b.extents, shape_b, "_b_matrix")},
                                      "_matmul");
  Operand result;
  result.labels = batch + free_a + free_b;
  result.extents = batch_out;
  for (char label : free_a) result.extents.push_back(a.ExtentOf(label));
  for (char label : free_b) result.extents.push_back(b.ExtentOf(label));
  std::vector<int64_t> matrix = batch_out;
  matrix.insert(matrix.end(), {m, n});
  result.value = ReshapeTo(node, product, matrix, result.extents, "_unmatrix");
  return result;
}

// The output's labels: given after "->", else every label used once, in alphabetical order after
// the ellipsis (ONNX's implicit form).
Labels OutputLabels(const std::string& given, bool explicit_output,
                    const std::vector<Labels>& terms, int ellipsis_rank, const std::string& where) {
  if (explicit_output) {
    const bool dots = given.find("...") != std::string::npos;
    const int letters = static_cast<int>(given.size()) - (dots ? 3 : 0);
    return SpellOut(given, letters + (dots ? ellipsis_rank : 0), where);
  }
  std::map<char, int> uses;
  for (const Labels& term : terms) {
    for (char label : term) ++uses[label];
  }
  Labels output;
  for (int i = ellipsis_rank; i > 0; --i) output += static_cast<char>('0' + i - 1);
  for (const auto& [label, count] : uses) {
    if (count == 1 && !(label >= '0' && label <= '9')) output += label;
  }
  return output;
}

void ConvertEinsum(OnnxNode& node) {
  std::string equation = node.attrs().String("equation", "");
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  const size_t arrow = equation.find("->");
  const std::string inputs_text = equation.substr(0, arrow);
  std::vector<std::string> terms_text;
  for (size_t start = 0;;) {
    const size_t comma = inputs_text.find(',', start);
    terms_text.push_back(inputs_text.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  MX_CHECK(static_cast<int>(terms_text.size()) == node.num_inputs())
      << node.where() << ": equation '" << equation << "' has " << terms_text.size()
      << " terms for " << node.num_inputs() << " inputs";
  MX_CHECK(node.num_inputs() == 1 || node.num_inputs() == 2)
      << node.where() << ": Einsum of " << node.num_inputs()
      << " operands is not supported (one or two)";
  std::vector<Operand> operands;
  std::vector<Labels> terms;
  int ellipsis_rank = 0;
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Shape shape = node.InputShape(i);
    Operand operand{node.Input(i), SpellOut(terms_text[i], shape.ndim(), node.where()),
                    shape.to_vector()};
    for (char label : operand.labels) {
      if (label >= '0' && label <= '9') ellipsis_rank = std::max(ellipsis_rank, label - '0' + 1);
    }
    terms.push_back(operand.labels);
    std::string suffix = "_in";
    suffix += std::to_string(i);
    operands.push_back(Diagonals(node, operand, suffix));
  }
  const Labels output =
      OutputLabels(arrow == std::string::npos ? "" : equation.substr(arrow + 2),
                   arrow != std::string::npos, terms, ellipsis_rank, node.where());
  // Labels one operand alone has and the output lacks are summed out first.
  for (size_t i = 0; i < operands.size(); ++i) {
    Labels keep = output;
    for (size_t j = 0; j < operands.size(); ++j) {
      if (j != i) keep += operands[j].labels;
    }
    std::string suffix = "_sum";
    suffix += std::to_string(i);
    operands[i] = SumOut(node, operands[i], keep, suffix);
  }
  Operand result =
      operands.size() == 2 ? Contract(node, operands[0], operands[1], output) : operands[0];
  for (char label : output) {
    MX_CHECK(Has(result.labels, label))
        << node.where() << ": output label '" << label << "' is in no input term";
  }
  result = Arrange(node, result, output, "_output");
  node.SetOutput(0, result.value);
}

}  // namespace

MXLITE_REGISTER_ONNX_CONVERTER(Einsum, 12, kMaxOnnxOpset, ConvertEinsum);

}  // namespace mxlite
