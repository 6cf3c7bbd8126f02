#include "ops/operator.h"

#if MXLITE_USE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "core/error.h"
#include "core/logging.h"
#include "memory/storage.h"

namespace mxlite {

// ---------------------------------------------------------------------------------------------
// ScratchSpace and TempSpace

namespace {
size_t AlignTo64(size_t bytes) { return (bytes + 63) / 64 * 64; }
}  // namespace

void SynchronizeStream(Context ctx, void* stream) {
  if (!ctx.is_gpu()) return;
#if MXLITE_USE_CUDA
  cudaError_t status = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
  MX_CHECK(status == cudaSuccess) << "cudaStreamSynchronize on " << ctx
                                  << " failed: " << cudaGetErrorString(status);
#else
  (void)stream;
#endif
}

TempSpace::~TempSpace() { Storage::Global().Free(block_); }

ScratchSpace::~ScratchSpace() {
  const bool grow = backing_ != nullptr && bytes_asked_ > backing_->block_.size;
  if (!blocks_.empty() || grow) {
    try {
      SynchronizeStream(ctx_, stream_);
    } catch (const Error& error) {
      MX_LOG(ERROR) << "scratch memory kept: " << error.what();
      return;  // leaking beats handing memory a kernel may still write to another op
    }
  }
  for (const StorageHandle& block : blocks_) Storage::Global().Free(block);
  if (grow) {
    try {
      StorageHandle larger = Storage::Global().Alloc(bytes_asked_, ctx_);
      Storage::Global().Free(backing_->block_);
      backing_->block_ = larger;
    } catch (const Error& error) {  // keep the old buffer; the next call uses the pool again
      MX_LOG(WARNING) << "temporary workspace not grown to " << bytes_asked_ << " bytes: "
                      << error.what();
    }
  }
}

void* ScratchSpace::Get(size_t bytes) {
  if (bytes == 0) return nullptr;
  const size_t aligned = AlignTo64(bytes);
  bytes_asked_ += aligned;
  if (backing_ != nullptr && backing_used_ + aligned <= backing_->block_.size) {
    void* ptr = static_cast<char*>(backing_->block_.ptr) + backing_used_;
    backing_used_ += aligned;
    return ptr;
  }
  blocks_.push_back(Storage::Global().Alloc(bytes, ctx_));
  return blocks_.back().ptr;
}

// ---------------------------------------------------------------------------------------------
// Shape inference helpers

const Shape& ShapeInference::Input(int i) const {
  MX_CHECK(i >= 0 && i < static_cast<int>(inputs.size()))
      << op << " " << node << ": has no input " << i;
  MX_CHECK(inputs[i].has_value()) << op << " " << node << ": the shape of input '"
                                  << input_names[i] << "' is not known";
  return *inputs[i];
}

void ShapeInference::AssignInput(int i, const Shape& shape) {
  MX_CHECK(i >= 0 && i < static_cast<int>(inputs.size()))
      << op << " " << node << ": has no input " << i;
  if (inputs[i].has_value()) {
    MX_CHECK(*inputs[i] == shape) << op << " " << node << ": input '" << input_names[i]
                                  << "' has shape " << *inputs[i] << " but " << shape
                                  << " is expected";
    return;
  }
  inputs[i] = shape;
}

void ShapeInference::AssignOutput(int i, const Shape& shape) {
  MX_CHECK(i >= 0 && i < static_cast<int>(outputs.size()))
      << op << " " << node << ": has no output " << i;
  if (outputs[i].has_value()) {
    MX_CHECK(*outputs[i] == shape) << op << " " << node << ": output '" << output_names[i]
                                   << "' has shape " << *outputs[i] << " but " << shape
                                   << " is expected";
    return;
  }
  outputs[i] = shape;
}

// ---------------------------------------------------------------------------------------------
// Registry

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = new OpRegistry();
  return *registry;
}

void OpRegistry::Register(OpDef def) {
  MX_CHECK(!def.name.empty()) << "an op without a name";
  MX_CHECK(ops_.count(def.name) == 0) << "op " << def.name << " registered twice";
  MX_CHECK(def.input_names && def.output_names && def.infer_shape)
      << "op " << def.name << " lacks input names, output names or shape inference";
  std::string name = def.name;
  ops_.emplace(std::move(name), std::move(def));
}

void OpRegistry::RegisterKernels(const std::string& op, DeviceType device, ForwardKernel forward,
                                 BackwardKernel backward) {
  auto key = std::make_pair(op, device);
  MX_CHECK(kernels_.count(key) == 0) << "kernels of " << op << " registered twice";
  kernels_.emplace(key, std::make_pair(std::move(forward), std::move(backward)));
}

void OpRegistry::RegisterStateCreator(const std::string& op, DeviceType device,
                                      StateCreator creator) {
  auto key = std::make_pair(op, device);
  MX_CHECK(state_creators_.count(key) == 0) << "state creator of " << op << " registered twice";
  state_creators_.emplace(key, std::move(creator));
}

const OpDef* OpRegistry::Find(const std::string& name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : &it->second;
}

const OpDef& OpRegistry::Get(const std::string& name) const {
  const OpDef* op = Find(name);
  if (op == nullptr) {
    std::string known;
    for (const auto& [known_name, def] : ops_) known += (known.empty() ? "" : ", ") + known_name;
    MX_THROW() << "unknown op '" << name << "'; known ops: " << known;
  }
  return *op;
}

std::vector<std::string> OpRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, def] : ops_) names.push_back(name);
  return names;
}

const ForwardKernel* OpRegistry::FindForward(const std::string& op, DeviceType device) const {
  if (auto it = kernels_.find({op, device}); it != kernels_.end() && it->second.first) {
    return &it->second.first;
  }
  const OpDef* def = Find(op);
  if (def == nullptr) return nullptr;
  auto it = def->forward.find(device);
  return it == def->forward.end() ? nullptr : &it->second;
}

const BackwardKernel* OpRegistry::FindBackward(const std::string& op, DeviceType device) const {
  if (auto it = kernels_.find({op, device}); it != kernels_.end() && it->second.second) {
    return &it->second.second;
  }
  const OpDef* def = Find(op);
  if (def == nullptr) return nullptr;
  auto it = def->backward.find(device);
  return it == def->backward.end() ? nullptr : &it->second;
}

const StateCreator* OpRegistry::FindStateCreator(const std::string& op, DeviceType device) const {
  if (auto it = state_creators_.find({op, device}); it != state_creators_.end()) {
    return &it->second;
  }
  const OpDef* def = Find(op);
  if (def == nullptr) return nullptr;
  auto it = def->create_state.find(device);
  return it == def->create_state.end() ? nullptr : &it->second;
}

namespace detail {
OpRegistrar::OpRegistrar(OpDef (*make)()) { OpRegistry::Global().Register(make()); }
KernelRegistrar::KernelRegistrar(const char* op, DeviceType device, ForwardKernel forward,
                                 BackwardKernel backward) {
  OpRegistry::Global().RegisterKernels(op, device, std::move(forward), std::move(backward));
}
StateCreatorRegistrar::StateCreatorRegistrar(const char* op, DeviceType device,
                                             StateCreator creator) {
  OpRegistry::Global().RegisterStateCreator(op, device, std::move(creator));
}
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// OpDef helpers with defaults

std::function<std::string(const std::map<std::string, std::string>&)> FixedNamePrefix(
    std::string prefix) {
  return [prefix = std::move(prefix)](const std::map<std::string, std::string>&) { return prefix; };
}

Attributes ParseOpAttributes(const OpDef& op, const std::map<std::string, std::string>& raw,
                             const std::string& node_name) {
  return op.attributes.Parse(raw, op.name + " " + node_name);
}

std::vector<std::string> InputNames(const OpDef& op, const Attributes& attrs) {
  return op.input_names(attrs);
}

std::vector<InputRole> InputRoles(const OpDef& op, const Attributes& attrs) {
  if (op.input_roles) return op.input_roles(attrs);
  return std::vector<InputRole>(op.input_names(attrs).size(), InputRole::kData);
}

std::vector<std::string> OutputNames(const OpDef& op, const Attributes& attrs) {
  return op.output_names(attrs);
}

int NumVisibleOutputs(const OpDef& op, const Attributes& attrs) {
  if (op.num_visible_outputs) return op.num_visible_outputs(attrs);
  return static_cast<int>(op.output_names(attrs).size());
}

BackwardDependencies BackwardDependenciesOf(const OpDef& op, const Attributes& attrs) {
  if (op.backward_dependencies) return op.backward_dependencies(attrs);
  return {std::vector<bool>(op.input_names(attrs).size(), true),
          std::vector<bool>(op.output_names(attrs).size(), true)};
}

std::vector<bool> InputHasGradient(const OpDef& op, const Attributes& attrs) {
  if (op.input_has_gradient) return op.input_has_gradient(attrs);
  std::vector<InputRole> roles = InputRoles(op, attrs);
  std::vector<bool> has(roles.size());
  for (size_t i = 0; i < roles.size(); ++i) has[i] = roles[i] != InputRole::kAuxiliary;
  return has;
}

void InferShapes(const OpDef& op, const Attributes& attrs, ShapeInference& shapes) {
  shapes.op = op.name;
  shapes.input_names = op.input_names(attrs);
  shapes.output_names = op.output_names(attrs);
  shapes.inputs.resize(shapes.input_names.size());
  shapes.outputs.resize(shapes.output_names.size());
  op.infer_shape(attrs, shapes);
  for (size_t i = 0; i < shapes.outputs.size(); ++i) {
    MX_CHECK(shapes.outputs[i].has_value()) << op.name << " " << shapes.node << ": the shape of "
                                            << "output '" << shapes.output_names[i]
                                            << "' could not be inferred";
  }
}

void InferDTypes(const OpDef& op, const Attributes& attrs, DTypeInference& dtypes) {
  dtypes.op = op.name;
  dtypes.inputs.resize(op.input_names(attrs).size());
  dtypes.outputs.resize(op.output_names(attrs).size());
  if (op.infer_dtype) {
    op.infer_dtype(attrs, dtypes);
    return;
  }
  std::optional<DType> known;
  for (const std::optional<DType>& dtype : dtypes.inputs) {
    if (!dtype) continue;
    if (!known) known = dtype;
    MX_CHECK(*dtype == *known) << op.name << " " << dtypes.node << ": inputs mix dtypes "
                               << *known << " and " << *dtype;
  }
  MX_CHECK(known.has_value()) << op.name << " " << dtypes.node
                              << ": no input has a known dtype";
  for (std::optional<DType>& dtype : dtypes.inputs) dtype = known;
  for (std::optional<DType>& dtype : dtypes.outputs) dtype = known;
}

const ForwardKernel& ForwardKernelFor(const OpDef& op, DeviceType device) {
  const ForwardKernel* kernel = OpRegistry::Global().FindForward(op.name, device);
  MX_CHECK(kernel != nullptr) << op.name << " has no forward kernel for "
                              << DeviceTypeName(device);
  return *kernel;
}

const BackwardKernel& BackwardKernelFor(const OpDef& op, DeviceType device) {
  const BackwardKernel* kernel = OpRegistry::Global().FindBackward(op.name, device);
  MX_CHECK(kernel != nullptr) << op.name << " has no backward kernel for "
                              << DeviceTypeName(device);
  return *kernel;
}

std::unique_ptr<OpState> CreateOpState(const OpDef& op, const StateRequest& request) {
  const StateCreator* creator =
      OpRegistry::Global().FindStateCreator(op.name, request.ctx.device_type);
  return creator != nullptr && *creator ? (*creator)(request) : nullptr;
}

}  // namespace mxlite
