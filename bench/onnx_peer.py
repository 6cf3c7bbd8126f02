"""Times one ONNX benchmark model in a peer runtime, printing what `mxlite bench` prints.

    python onnx_peer.py onnxruntime|pytorch MODEL --onnx PATH --batch B --threads T
                        [--warmup W] [--iters I] [--jit] [--device cpu|cuda] [--tf32 on|off]
                        [--half]

onnxruntime runs the exported ONNX file (CPU provider, intra-op threads T, inter-op 1,
sequential, all graph optimisations: its defaults otherwise). pytorch rebuilds the same network
with the same seed (bench/onnx_models.py) and runs it under torch.no_grad with torch.set_num_threads(T);
--jit traces it and applies torch.jit.optimize_for_inference. Inputs are uniform in [-1, 1) from a
fixed seed. With --device cuda (pytorch only) the model and the input live on the GPU, cuDNN
autotuning is on (torch.backends.cudnn.benchmark) and each pass waits for the device; --tf32
sets torch.backends.cudnn.allow_tf32 and cuda.matmul.allow_tf32 (PyTorch's default: TF32 in
convolutions, so "off" is the float32 arithmetic mxlite uses unless
MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION=1); --half (cuda) runs model.half() on a float16
input, the peer of `mxlite bench --dtype float16`. Each pass is one run on the batch; latency percentiles are nearest-rank, as in mxlite.
"""
import argparse
import math
import time

import numpy as np


def percentile(sorted_values, p):
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def onnxruntime_runner(args, x):
    import onnxruntime
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = onnxruntime.InferenceSession(args.onnx, options, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    return lambda: session.run(None, {name: x})


def pytorch_runner(args, x):
    import torch
    import onnx_models
    torch.set_num_threads(args.threads)
    seed = list(onnx_models.MODELS).index(args.model)
    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = True
    if args.tf32 is not None:
        torch.backends.cudnn.allow_tf32 = args.tf32 == "on"
        torch.backends.cuda.matmul.allow_tf32 = args.tf32 == "on"
    model = onnx_models.build(args.model, seed).to(device).eval()
    tensor = torch.from_numpy(x).to(device)
    if args.half:
        model, tensor = model.half(), tensor.half()
    if args.jit:
        with torch.no_grad():
            model = torch.jit.optimize_for_inference(torch.jit.trace(model, tensor))

    def run():
        with torch.no_grad():
            out = model(tensor)
        if device.type == "cuda":
            torch.cuda.synchronize()
        return out
    return run


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("runtime", choices=["onnxruntime", "pytorch"])
    parser.add_argument("model")
    parser.add_argument("--onnx", required=True)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--jit", action="store_true")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--tf32", choices=["on", "off"], help="cuda: TF32 in convolutions and matmuls")
    parser.add_argument("--half", action="store_true", help="cuda: the model and input in float16")
    args = parser.parse_args()
    if args.device == "cuda" and args.runtime != "pytorch":
        parser.error("--device cuda is for the pytorch runtime")
    x = np.random.default_rng(42).uniform(-1, 1, (args.batch, 3, 224, 224)).astype(np.float32)
    run = (onnxruntime_runner if args.runtime == "onnxruntime" else pytorch_runner)(args, x)
    for _ in range(args.warmup):
        run()
    seconds = []
    for _ in range(args.iters):
        start = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - start)
    ordered = sorted(seconds)
    for p in (50, 90, 99):
        print(f"latency p{p}: {percentile(ordered, p) * 1e3:.3f} ms")
    print(f"throughput: {args.batch * len(seconds) / sum(seconds):.1f} images/s")


if __name__ == "__main__":
    main()
