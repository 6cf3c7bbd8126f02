"""Times one ONNX benchmark model in a peer runtime, printing what `mxlite bench` prints.

    python onnx_peer.py onnxruntime|openvino|ncnn|pytorch MODEL --onnx PATH --batch B --threads T
                        [--warmup W] [--iters I] [--jit] [--device cpu|cuda] [--tf32 on|off]
                        [--half] [--ncnn PREFIX]

onnxruntime runs the exported ONNX file (CPU provider, intra-op threads T, inter-op 1,
sequential, all graph optimisations: its defaults otherwise). openvino runs the same file on its
CPU plugin (INFERENCE_NUM_THREADS T, one stream, the latency hint, f32 inference precision, the
input reshaped to the batch). ncnn runs PREFIX.ncnn.param/.bin (bench/ncnn_models.py converts the
same network with pnnx) in fp32 (fp16/bf16 storage and arithmetic off; Winograd, sgemm and
packed layouts on, as by default), T threads, no Vulkan; ncnn takes one image per extraction, so
a batch is B extractions. pytorch rebuilds the same network
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


def openvino_runner(args, x):
    import openvino
    core = openvino.Core()
    model = core.read_model(args.onnx)
    model.reshape({model.inputs[0].get_any_name(): list(x.shape)})
    compiled = core.compile_model(model, "CPU", {
        "INFERENCE_NUM_THREADS": args.threads, "NUM_STREAMS": 1,
        "PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    return lambda: request.infer({0: x})


def ncnn_runner(args, x):
    import ncnn
    net = ncnn.Net()
    net.opt.use_vulkan_compute = False
    net.opt.num_threads = args.threads
    for option in ("use_fp16_packed", "use_fp16_storage", "use_fp16_arithmetic",
                   "use_bf16_storage"):
        setattr(net.opt, option, False)
    if net.load_param(args.ncnn + ".ncnn.param") != 0 or net.load_model(args.ncnn + ".ncnn.bin") != 0:
        raise SystemExit(f"ncnn could not load {args.ncnn}.ncnn.param/.bin")
    images = [ncnn.Mat(np.ascontiguousarray(image)) for image in x]

    def run():
        outputs = []
        for image in images:
            extractor = net.create_extractor()
            extractor.input("in0", image)
            outputs.append(extractor.extract("out0")[1])
        return outputs
    return run


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
    parser.add_argument("runtime", choices=["onnxruntime", "openvino", "ncnn", "pytorch"])
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
    parser.add_argument("--ncnn", help="ncnn: the converted model's path without .ncnn.param/.bin")
    args = parser.parse_args()
    if args.device == "cuda" and args.runtime != "pytorch":
        parser.error("--device cuda is for the pytorch runtime")
    x = np.random.default_rng(42).uniform(-1, 1, (args.batch, 3, 224, 224)).astype(np.float32)
    if args.runtime == "ncnn" and not args.ncnn:
        parser.error("ncnn needs --ncnn PREFIX (bench/ncnn_models.py)")
    runners = {"onnxruntime": onnxruntime_runner, "openvino": openvino_runner,
               "ncnn": ncnn_runner, "pytorch": pytorch_runner}
    run = runners[args.runtime](args, x)
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
