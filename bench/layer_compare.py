"""Convolution by convolution: mxlite beside ONNX Runtime on one model, from both profilers.

    bench/onnx_env.sh's venv python (it has onnxruntime):
    build-dev/onnx-bench/venv/bin/python bench/layer_compare.py build-dev/onnx-bench/mobilenet_v2.onnx \
        --mxlite build-dev/bin/mxlite --threads 1 [--batch 1] [--iters 40]

Runs the model under ONNX Runtime with profiling on (CPU provider, intra-op threads T, inter-op 1,
sequential, all graph optimisations, as bench/onnx_peer.py) and under `mxlite bench` with
MXNET_PROFILER_AUTOSTART=1, then prints, for the i-th convolution of each (both runtimes keep the
graph's order; ONNX Runtime fuses a Conv with its Clip/Relu, mxlite folds them too), the median
microseconds per pass of each, their ratio, and the totals. The first passes of each are warm-up
and left out. Node names differ (ONNX Runtime names a fused node by its output), so rows are
matched by position and labelled with mxlite's node name; a model whose convolution counts differ
between the two is refused. mxlite runs with MXNET_CONV_FUSE_DEPTHWISE=0 here (a fused depthwise
block is one op for three convolutions); `mxlite bench` shows the fused totals.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def ort_conv_times(args):
    import onnxruntime
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.enable_profiling = True
    options.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
    session = onnxruntime.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    x = np.random.RandomState(0).uniform(-1, 1, (args.batch, 3, 224, 224)).astype(np.float32)
    name = session.get_inputs()[0].name
    for _ in range(args.warmup + args.iters):
        session.run(None, {name: x})
    events = json.load(open(session.end_profiling()))
    by_node = collections.OrderedDict()
    for event in events:
        if event.get("cat") != "Node" or not event["name"].endswith("_kernel_time"):
            continue
        if event["args"].get("op_name") not in ("Conv", "FusedConv"):
            continue
        by_node.setdefault(event["name"], []).append(event["dur"])
    return [median(durations[args.warmup:] or durations) for durations in by_node.values()]


def mxlite_conv_times(args):
    folder = tempfile.mkdtemp()
    # Convolution by convolution: depthwise blocks run fused would be one profile row for three.
    env = dict(os.environ, MXNET_PROFILER_AUTOSTART="1", MXNET_TUNING_REPORT="off",
               MXNET_CONV_FUSE_DEPTHWISE="0")
    subprocess.run([os.path.abspath(args.mxlite), "bench", os.path.abspath(args.model),
                    "--batch", str(args.batch), "--threads", str(args.threads),
                    "--warmup", str(args.warmup), "--iters", str(args.iters)],
                   cwd=folder, env=env, check=True, stdout=subprocess.DEVNULL)
    events = json.load(open(os.path.join(folder, "profile.json")))["traceEvents"]
    by_node = collections.OrderedDict()
    for event in sorted((e for e in events if e.get("ph") == "X" and e.get("cat") == "operator"),
                        key=lambda e: e["ts"]):
        if event["name"].endswith("Conv"):
            by_node.setdefault(event["name"], []).append(event["dur"])
    # The tuning passes and warm-up come first: keep the last `iters` of each node.
    return [(name, median(durations[-args.iters:])) for name, durations in by_node.items()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("--mxlite", default="build-dev/bin/mxlite")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=40)
    args = parser.parse_args()
    ort = ort_conv_times(args)
    mx = mxlite_conv_times(args)
    if len(ort) != len(mx):
        sys.exit(f"{args.model}: ONNX Runtime ran {len(ort)} convolutions, mxlite {len(mx)}; "
                 "rows cannot be matched by position")
    print(f"| # | mxlite node | ORT us | mxlite us | mxlite / ORT |  (batch {args.batch}, "
          f"{args.threads} thread(s), medians of {args.iters} passes)")
    print("|---|---|---|---|---|")
    for i, (ort_us, (name, mx_us)) in enumerate(zip(ort, mx)):
        print(f"| {i} | {name} | {ort_us:.0f} | {mx_us:.0f} | {mx_us / ort_us:.2f} |")
    total_ort, total_mx = sum(ort), sum(us for _, us in mx)
    print(f"| | all convolutions | {total_ort:.0f} | {total_mx:.0f} | {total_mx / total_ort:.2f} |")


if __name__ == "__main__":
    main()
