"""Exports the ONNX benchmark models from PyTorch, with an input and PyTorch's output.

    /usr/bin/python3 bench/onnx_models.py OUT_DIR [MODEL ...]

For each MODEL (default: resnet18 mobilenet_v2; any key of MODELS below — torchvision,
random weights from a fixed seed: no pretrained weights are downloaded) writes OUT_DIR/<model>.onnx (opset 13, or 17 where
the exporter needs a later opset for the model; dynamic batch dim "batch"),
OUT_DIR/<model>_input.pb (a (2, 3, 224, 224) input from a fixed seed), OUT_DIR/<model>_expected.pb
(PyTorch's output for it, eval mode) and OUT_DIR/models.json (input/output names and the
convolution + linear FLOPs of one image, for GFLOP/s). BatchNorm's running statistics and affine
parameters are randomised too, so the exported BatchNormalization nodes are not identities, and
a linear layer torchvision starts at zero (ViT's head) is drawn at random.
"""
import inspect
import json
import os
import sys

import torch
import torchvision

import tensor_pb

class SegmentationOutput(torch.nn.Module):
    """A torchvision segmentation model's main output (its forward returns a dict)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def segmentation(builder):
    return lambda: SegmentationOutput(builder(weights=None, weights_backbone=None))


MODELS = {
    "resnet18": lambda: torchvision.models.resnet18(),
    "mobilenet_v2": lambda: torchvision.models.mobilenet_v2(),
    "resnet50": lambda: torchvision.models.resnet50(),
    "vgg16": lambda: torchvision.models.vgg16(),
    # Inception v1; the auxiliary classifiers only matter in training.
    "googlenet": lambda: torchvision.models.googlenet(aux_logits=False, init_weights=True),
    # The rest of the torchvision zoo that imports (appended: each model's seed is its index).
    "densenet121": lambda: torchvision.models.densenet121(),
    "efficientnet_b0": lambda: torchvision.models.efficientnet_b0(),
    "inception_v3": lambda: torchvision.models.inception_v3(aux_logits=False, init_weights=True),
    "resnext50_32x4d": lambda: torchvision.models.resnext50_32x4d(),
    "regnet_y_400mf": lambda: torchvision.models.regnet_y_400mf(),
    "regnet_x_400mf": lambda: torchvision.models.regnet_x_400mf(),
    "vgg11_bn": lambda: torchvision.models.vgg11_bn(),
    "efficientnet_v2_s": lambda: torchvision.models.efficientnet_v2_s(),
    "mnasnet0_5": lambda: torchvision.models.mnasnet0_5(),
    "mobilenet_v3_small": lambda: torchvision.models.mobilenet_v3_small(),
    "shufflenet_v2_x1_0": lambda: torchvision.models.shufflenet_v2_x1_0(),
    "squeezenet1_1": lambda: torchvision.models.squeezenet1_1(),
    "alexnet": lambda: torchvision.models.alexnet(),
    "wide_resnet50_2": lambda: torchvision.models.wide_resnet50_2(),
    "convnext_tiny": lambda: torchvision.models.convnext_tiny(),
    "vit_b_16": lambda: torchvision.models.vit_b_16(),
    "swin_t": lambda: torchvision.models.swin_t(),
    # Segmentation (torchvision.models.segmentation): the per-pixel class scores, "out".
    "fcn_resnet50": segmentation(torchvision.models.segmentation.fcn_resnet50),
    "deeplabv3_mobilenet_v3_large":
        segmentation(torchvision.models.segmentation.deeplabv3_mobilenet_v3_large),
    "lraspp_mobilenet_v3_large":
        segmentation(torchvision.models.segmentation.lraspp_mobilenet_v3_large),
}
DEFAULT_MODELS = ["resnet18", "mobilenet_v2"]
INPUT_SHAPE = (2, 3, 224, 224)


def randomise(model):
    """BatchNorm statistics and affine parameters drawn at random (of any rank: the video models'
    are 3-D), so no exported BatchNormalization is an identity; a Linear that starts at zero (ViT's
    head) drawn too, or the output would be 0 whatever the rest computes. Returns the model in
    eval mode."""
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm) and module.affine:
            module.running_mean.uniform_(-0.1, 0.1)
            module.running_var.uniform_(0.5, 1.5)
            module.weight.data.uniform_(0.5, 1.5)
            module.bias.data.uniform_(-0.1, 0.1)
        if isinstance(module, torch.nn.Linear) and not module.weight.data.any():
            module.weight.data.normal_(0, 0.02)
    return model.eval()


def build(name, seed):
    torch.manual_seed(seed)
    return randomise(MODELS[name]())


def flops_per_image(model):
    """2 * multiply-adds of every Conv2d and Linear for one 224x224 image."""
    total = 0

    def conv_hook(module, inputs, output):
        nonlocal total
        kernel = module.kernel_size[0] * module.kernel_size[1] * module.in_channels // module.groups
        total += 2 * output.numel() * kernel

    def linear_hook(module, inputs, output):
        nonlocal total
        total += 2 * output.numel() * module.in_features

    hooks = []
    for module in model.modules():
        if isinstance(module, torch.nn.Conv2d):
            hooks.append(module.register_forward_hook(conv_hook))
        elif isinstance(module, torch.nn.Linear):
            hooks.append(module.register_forward_hook(linear_hook))
    with torch.no_grad():
        model(torch.zeros(1, 3, 224, 224))
    for hook in hooks:
        hook.remove()
    return total


def register_missing_symbolics():
    """Exporter gaps of Debian's PyTorch 1.13 filled with plain ONNX ops, so its models export.

    aten::zero: Tensor.zero_() (Swin-V2 zeroes the key part of its qkv bias in forward; the
    exporter makes the in-place op out of place, then has no symbolic for it). Zeros of the
    input's shape, float32 as the parameters it is applied to."""
    if getattr(register_missing_symbolics, "done", False):
        return

    def zero(g, self):
        return g.op("ConstantOfShape", g.op("Shape", self),
                    value_t=torch.zeros(1, dtype=torch.float32))

    for opset in range(9, 18):
        torch.onnx.register_custom_op_symbolic("aten::zero", zero, opset)
    register_missing_symbolics.done = True


def legacy_exporter():
    """Newer PyTorch (2.9+) exports through dynamo by default; ask for the TorchScript exporter
    that Debian's PyTorch 1.13 uses, so every machine writes the same kind of graph."""
    return {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}


def export(name, out_dir, seed):
    model = build(name, seed)
    torch.manual_seed(seed + 1000)
    x = torch.empty(INPUT_SHAPE).uniform_(-1, 1)
    with torch.no_grad():
        expected = model(x)
    path = os.path.join(out_dir, name + ".onnx")
    tmp = path + ".tmp"
    for opset in (13, 17):
        try:
            torch.onnx.export(model, x, tmp, opset_version=opset, input_names=["input"],
                              output_names=["logits"], do_constant_folding=True,
                              dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                              **legacy_exporter())
            break
        except torch.onnx.errors.UnsupportedOperatorError:
            # Newer PyTorch writes some modules with ops of later opsets (ViT's attention as
            # scaled_dot_product_attention, opset 14): export at 17 then, as a user would.
            if opset == 17:
                raise
    os.replace(tmp, path)
    tensor_pb.write(os.path.join(out_dir, name + "_input.pb"), x.numpy(), "input")
    tensor_pb.write(os.path.join(out_dir, name + "_expected.pb"), expected.numpy(), "logits")
    return {"onnx": path, "input": "input", "output": "logits",
            "flops_per_image": flops_per_image(model), "seed": seed, "opset": opset,
            "torch": torch.__version__, "torchvision": torchvision.__version__}


def main():
    if len(sys.argv) < 2 or any(name not in MODELS for name in sys.argv[2:]):
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    meta_path = os.path.join(out_dir, "models.json")
    meta = {}
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
    for name in sys.argv[2:] or DEFAULT_MODELS:
        seed = list(MODELS).index(name)  # the seed each model always had
        meta[name] = export(name, out_dir, seed)
        print(f"{name}: {meta[name]['onnx']} ({meta[name]['flops_per_image'] / 1e9:.2f} GFLOP/image)")
    with open(meta_path + ".tmp", "w") as f:
        json.dump(meta, f, indent=1)
    os.replace(meta_path + ".tmp", meta_path)


if __name__ == "__main__":
    main()
