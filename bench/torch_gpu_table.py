"""Times one benchmark model in PyTorch on the GPU at several batches and precisions, in one process.

    python3 bench/torch_gpu_table.py MODEL --batches 1 16 64 --maths fp32 tf32 fp16
                                     [--warmup W] [--iters I] [--graphs]

The peer of `mxlite bench --device gpu` in bench/gpu_check.sh: the model is rebuilt with the seed
of bench/onnx_models.py, in eval mode under torch.no_grad, with cuDNN autotuning on
(torch.backends.cudnn.benchmark). fp32 is float32 arithmetic (TF32 off in convolutions and
matmuls), tf32 PyTorch's default for convolutions (TF32 on), fp16 model.half() on a float16 input.
Each pass is one forward on the batch, waited for (torch.cuda.synchronize). With --graphs each
configuration is also timed with the pass captured once as a CUDA graph (torch.cuda.graph) and
replayed, PyTorch's own answer to launch-bound batches. Prints one line per configuration:

    pytorch MODEL bBATCH MATH eager p50 X ms [graph p50 Y ms]

With --training each configuration times a training step instead, as `mxlite bench --training`
does: forward in training mode and backward of the outputs' sum (head gradients of ones), no
update; fp16 is then the model in float16 throughout (model.half(), as mxlite's --dtype float16),
not autocast:

    pytorch MODEL bBATCH MATH training p50 X ms

Inputs are uniform in [-1, 1) from a fixed seed; p50 is nearest-rank, as in mxlite.
"""
import argparse
import math
import time

import numpy as np
import torch

import onnx_models


def percentile(sorted_values, p):
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def time_passes(run, warmup, iters):
    for _ in range(warmup):
        run()
    torch.cuda.synchronize()
    seconds = []
    for _ in range(iters):
        start = time.perf_counter()
        run()
        torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
    return percentile(sorted(seconds), 50) * 1e3


def graphed(model, x, warmup):
    """The pass captured as a CUDA graph (after warm-up passes on a side stream, as PyTorch asks)."""
    static_x = x.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(max(3, warmup)):
            model(static_x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        model(static_x)
    return graph.replay


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model", choices=list(onnx_models.MODELS))
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--maths", nargs="+", default=["fp32", "tf32"],
                        choices=["fp32", "tf32", "fp16"])
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--iters", type=int, default=100)
    parser.add_argument("--graphs", action="store_true")
    parser.add_argument("--training", action="store_true")
    args = parser.parse_args()

    torch.backends.cudnn.benchmark = True
    device = torch.device("cuda")
    seed = list(onnx_models.MODELS).index(args.model)
    def build():
        model = onnx_models.build(args.model, seed).to(device)
        return model.train() if args.training else model.eval()

    model32 = build()
    model16 = None
    for math_mode in args.maths:
        tf32 = math_mode == "tf32"
        torch.backends.cudnn.allow_tf32 = tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32
        if math_mode == "fp16" and model16 is None:
            model16 = build().half()
        model = model16 if math_mode == "fp16" else model32
        for batch in args.batches:
            x = torch.from_numpy(
                np.random.default_rng(42).uniform(-1, 1, (batch, 3, 224, 224)).astype(np.float32))
            x = x.to(device)
            if math_mode == "fp16":
                x = x.half()

            if args.training:
                def step():
                    model(x).sum().backward()

                print(f"pytorch {args.model} b{batch} {math_mode} training p50 "
                      f"{time_passes(step, args.warmup, args.iters):.3f} ms", flush=True)
                continue

            def eager():
                with torch.no_grad():
                    model(x)

            line = (f"pytorch {args.model} b{batch} {math_mode} eager p50 "
                    f"{time_passes(eager, args.warmup, args.iters):.3f} ms")
            if args.graphs:
                replay = graphed(model, x, args.warmup)
                line += f" graph p50 {time_passes(replay, args.warmup, args.iters):.3f} ms"
            print(line, flush=True)


if __name__ == "__main__":
    main()
