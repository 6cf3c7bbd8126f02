"""The ResNet-50 layer set (bench/resnet50_layers.h) on a GPU: one ONNX model per layer for
`mxlite bench --device gpu`, and PyTorch's time for the same convolution in the same run.

    python3 bench/gpu_conv_layers.py export OUT_DIR          # OUT_DIR/<layer>.onnx, layers.txt
    (run from bench/; a layer's name is its label with runs of other characters as "_",
    e.g. 3x3_64_64_56x56)
    python3 bench/gpu_conv_layers.py torch LAYER BATCH [--tf32 on|off] [--iters I]

Each model is one Conv (no bias, random weights from a fixed seed, dynamic batch) so that
mxlite's pass is that convolution alone. PyTorch runs the same nn.Conv2d on CUDA with
cudnn.benchmark=True; like `mxlite bench`, each timed pass is one call waited for
(torch.cuda.synchronize), median of --iters after 10 warm-up calls. bench/gpu_check.sh runs both.
"""
import os
import re
import statistics
import sys
import time

import torch

from conv_torch import LAYERS  # (label, in, out, kernel, stride, pad, size): resnet50_layers.h
from onnx_models import legacy_exporter


def file_name(label):
    """"3x3 64->64 56x56" -> "3x3_64_64_56x56": the layer's model file and command-line name."""
    return re.sub(r"[^0-9A-Za-z]+", "_", label).strip("_")


def layer(name):
    for row in LAYERS:
        if file_name(row[0]) == name:
            return row
    sys.exit(f"unknown layer {name}; expected one of {[file_name(row[0]) for row in LAYERS]}")


def conv(row):
    _, cin, cout, k, stride, pad, _ = row
    torch.manual_seed(0)
    return torch.nn.Conv2d(cin, cout, k, stride=stride, padding=pad, bias=False).eval()


def export(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for row in LAYERS:
        _, cin, _, _, _, _, size = row
        x = torch.zeros(1, cin, size, size)
        path = f"{out_dir}/{file_name(row[0])}.onnx"
        torch.onnx.export(conv(row), x, path + ".tmp", opset_version=13, input_names=["input"],
                          output_names=["output"],
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
                          **legacy_exporter())
        os.replace(path + ".tmp", path)
    with open(f"{out_dir}/layers.txt", "w") as f:
        f.write("\n".join(file_name(row[0]) for row in LAYERS) + "\n")


def time_torch(name, batch, tf32, iters):
    row = layer(name)
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = tf32 == "on"
    model = conv(row).cuda()
    x = torch.empty(batch, row[1], row[6], row[6], device="cuda").uniform_(-1, 1)
    with torch.no_grad():
        for _ in range(10):
            model(x)
        torch.cuda.synchronize()
        seconds = []
        for _ in range(iters):
            start = time.perf_counter()
            model(x)
            torch.cuda.synchronize()
            seconds.append(time.perf_counter() - start)
    print(f"latency p50: {statistics.median(seconds) * 1e3:.3f} ms")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "export":
        export(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "torch":
        args = sys.argv[4:]
        tf32 = args[args.index("--tf32") + 1] if "--tf32" in args else "off"
        iters = int(args[args.index("--iters") + 1]) if "--iters" in args else 100
        time_torch(sys.argv[2], int(sys.argv[3]), tf32, iters)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
