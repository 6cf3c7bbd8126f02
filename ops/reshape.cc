// Reshape: the same elements in the same order under a new shape, given with MXNet's codes:
//   d > 0  this extent                  0   copy the next input extent
//   -1     infer from the element count  -2  copy all remaining input extents
//   -3     merge the next two input extents into one
//   -4 a b split the next input extent into a and b (one of them may be -1)
// Positive values and -1 also consume one input extent, so `0` always copies the extent at the
// position the input has reached (ONNX's 0 and -1 mean the same). With reverse=true the codes
// are matched from the right: (10,5,4) with shape (-1,0) gives (40,5) forward, (50,4) reversed.
// Runs in place; backward needs no forward tensor.
#include <algorithm>
#include <sstream>

#include "ops/copy_kernels.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

// Applies the codes of `spec` to the extents of `input` (both already reversed when asked).
// `where` prefixes error messages.
std::vector<int64_t> ApplyReshapeCodes(const std::vector<int64_t>& input,
                                       const std::vector<int64_t>& spec, const std::string& where) {
  std::vector<int64_t> result;
  const int64_t input_ndim = static_cast<int64_t>(input.size());
  int64_t next = 0;  // the next input extent to consume
  int inferred = -1;
  auto consume = [&](const char* code) {
    MX_CHECK(next < input_ndim) << where << ": code " << code << " needs input extent " << next
                                << " but the input has only " << input_ndim << " dims";
    return input[next++];
  };
  for (size_t i = 0; i < spec.size(); ++i) {
    const int64_t code = spec[i];
    if (code > 0) {
      result.push_back(code);
      if (next < input_ndim) ++next;
    } else if (code == 0) {
      result.push_back(consume("0"));
    } else if (code == -1) {
      MX_CHECK(inferred < 0) << where << ": more than one -1";
      inferred = static_cast<int>(result.size());
      result.push_back(1);
      if (next < input_ndim) ++next;
    } else if (code == -2) {
      while (next < input_ndim) result.push_back(input[next++]);
    } else if (code == -3) {
      const int64_t first = consume("-3");
      result.push_back(first * consume("-3"));
    } else if (code == -4) {
      MX_CHECK(i + 2 < spec.size()) << where << ": -4 must be followed by two extents";
      const int64_t whole = consume("-4");
      int64_t left = spec[++i], right = spec[++i];
      MX_CHECK((left > 0 || left == -1) && (right > 0 || right == -1) &&
               !(left == -1 && right == -1))
          << where << ": -4 splits into two positive extents, at most one of them -1; got " << left
          << ", " << right;
      if (left == -1) left = whole / right;
      if (right == -1) right = whole / left;
      MX_CHECK(left * right == whole) << where << ": -4 cannot split extent " << whole << " into "
                                      << spec[i - 1] << " x " << spec[i];
      result.push_back(left);
      result.push_back(right);
    } else {
      MX_THROW() << where << ": unknown code " << code << " (codes are 0, -1, -2, -3, -4)";
    }
  }
  if (inferred >= 0) {
    int64_t known = 1, total = 1;
    for (int64_t extent : result) known *= extent;
    for (int64_t extent : input) total *= extent;
    MX_CHECK(known != 0 && total % known == 0)
        << where << ": cannot infer -1, the input's " << total << " elements are not a multiple "
        << "of the other extents' product " << known;
    result[inferred] = total / known;
  }
  return result;
}

void ReshapeShape(const Attributes& attrs, ShapeInference& shapes) {
  const Shape& data = shapes.Input(0);
  std::vector<int64_t> input = data.to_vector();
  std::vector<int64_t> spec = attrs.GetInts("shape");
  const bool reverse = attrs.GetBool("reverse");
  std::ostringstream where;
  where << shapes.op << " " << shapes.node << ": shape=" << FormatIntTuple(attrs.GetInts("shape"))
        << (reverse ? " (reverse)" : "") << " on input " << data;
  if (reverse) {
    std::reverse(input.begin(), input.end());
    std::reverse(spec.begin(), spec.end());
    // A reversed `-4 a b` reads `b a -4`: put the code back in front of its two extents.
    for (size_t i = 0; i < spec.size(); ++i) {
      if (spec[i] == -4 && i >= 2) {
        const int64_t b = spec[i - 2], a = spec[i - 1];
        spec[i - 2] = -4;
        spec[i - 1] = b;  // split into (b, a) here, which reads (a, b) once the result is reversed
        spec[i] = a;
      }
    }
  }
  std::vector<int64_t> result = ApplyReshapeCodes(input, spec, where.str());
  if (reverse) std::reverse(result.begin(), result.end());
  MX_CHECK(static_cast<int>(result.size()) <= Shape::kMaxDims)
      << where.str() << ": the result has " << result.size() << " dims, at most " << Shape::kMaxDims
      << " are supported";
  const Shape output(result);
  MX_CHECK(output.size() == data.size())
      << where.str() << ": cannot reshape " << data << " (" << data.size() << " elements) to "
      << output << " (" << output.size() << " elements)";
  shapes.AssignOutput(0, output);
}

}  // namespace

MXLITE_REGISTER_OP(Reshape) {
  OpDef op;
  op.name = "Reshape";
  op.cheap_to_recompute = true;
  op.doc = "Gives the input a new shape with MXNet's codes 0, -1, -2, -3, -4 (see ops/reshape.cc).";
  op.attributes.IntTuple("shape", "the target shape, with codes 0 -1 -2 -3 -4", Default("()"))
      .Bool("reverse", "match the codes from the right", Default("false"));
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = ReshapeShape;
  op.backward_dependencies = NoBackwardDependencies;
  op.inplace = {{0, 0}};
  op.forward[DeviceType::kCPU] = CopyForwardCpu;
  op.backward[DeviceType::kCPU] = CopyBackwardCpu;
  return op;
}

}  // namespace mxlite
