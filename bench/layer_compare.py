"""Convolution by convolution: mxlite beside ONNX Runtime on one model, from both profilers.

    bench/onnx_env.sh's venv python (it has onnxruntime):
    build-dev/onnx-bench/venv/bin/python bench/layer_compare.py build-dev/onnx-bench/mobilenet_v2.onnx \
        --mxlite build-dev/bin/mxlite --threads 1 [--batch 1] [--iters 40] [--rounds 3]

Runs the model under ONNX Runtime with profiling on (CPU provider, intra-op threads T, inter-op 1,
sequential, all graph optimisations, as bench/onnx_peer.py) and under `mxlite bench` with
MXNET_PROFILER_AUTOSTART=1, then prints, for the i-th convolution of each (both runtimes keep the
graph's order; ONNX Runtime fuses a Conv with its Clip/Relu, mxlite folds them too), the median
microseconds per pass of each, their ratio, and the totals. The first passes of each are warm-up
and left out. ONNX Runtime names a fused node by a tensor it writes (the Relu's output, with
"_nchwc" where it runs blocked), so each of its rows is traced back through the model's graph to
the Conv node that tensor comes from, which is the name mxlite's profile uses (ONNX Runtime's Conv
kernels that come from no Conv node, BatchNorms it runs as 1x1 convolutions, are summed on a line
of their own); where that fails for any row rows are matched by position instead, and a model
whose convolution counts then differ is refused. Rows are in mxlite's order. With --rounds R the
two runtimes run R times in turn and each row keeps its fastest median: on a machine whose load
comes and goes, a slow spell slows a whole run. mxlite runs with MXNET_CONV_FUSE_DEPTHWISE=0 here (a fused depthwise
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

import onnx_nodes


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
        name = event["name"][:-len("_kernel_time")]
        by_node.setdefault(name, []).append(event["dur"])
    return [(name, median(durations[args.warmup:] or durations))
            for name, durations in by_node.items()]


def conv_node_of(model_path):
    """A function from an ONNX Runtime node name to the model's Conv node it computes, or None."""
    nodes = onnx_nodes.read_nodes(model_path)
    producer = {output: node for node in nodes for output in node.outputs}
    by_name = {node.name: node for node in nodes}

    def find(ort_name):
        node = by_name.get(ort_name)
        if node is None:
            tensor = ort_name[:-len("_nchwc")] if ort_name.endswith("_nchwc") else ort_name
            node = producer.get(tensor)
        # Back from a fused activation (or a residual Add's first input) to the convolution.
        while node is not None and node.op_type != "Conv" and node.inputs:
            node = producer.get(node.inputs[0])
        return node.name if node is not None and node.op_type == "Conv" else None
    return find


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


def fastest_of_rounds(rounds):
    """Per row, the smallest of the rounds' medians (rows in the first round's order)."""
    best = collections.OrderedDict()
    for round_rows in rounds:
        for name, us in round_rows:
            best[name] = min(us, best.get(name, us))
    return list(best.items())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("--mxlite", default="build-dev/bin/mxlite")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=1,
                        help="run the two runtimes this many times in turn and keep each row's "
                             "fastest median (a loaded machine slows whole runs, not single rows)")
    args = parser.parse_args()
    ort_rounds, mx_rounds = [], []
    for _ in range(args.rounds):
        ort_rounds.append(ort_conv_times(args))
        mx_rounds.append(mxlite_conv_times(args))
    ort, mx = fastest_of_rounds(ort_rounds), fastest_of_rounds(mx_rounds)
    find = conv_node_of(args.model)
    by_conv = collections.defaultdict(float)
    other_ort = []  # ONNX Runtime's Conv kernels that compute no Conv node (a BatchNorm as a 1x1)
    for name, us in ort:
        conv = find(name)
        if conv is None:
            other_ort.append(us)
        else:
            by_conv[conv] += us
    if all(name in by_conv for name, _ in mx) and len(by_conv) == len(mx):
        ort = [by_conv[name] for name, _ in mx]
    elif len(ort) != len(mx):
        sys.exit(f"{args.model}: ONNX Runtime ran {len(ort)} convolutions, mxlite {len(mx)}; "
                 "rows cannot be matched by name or position")
    else:
        ort, other_ort = [us for _, us in ort], []
    rounds = f", fastest of {args.rounds} rounds" if args.rounds > 1 else ""
    print(f"| # | mxlite node | ORT us | mxlite us | mxlite / ORT |  (batch {args.batch}, "
          f"{args.threads} thread(s), medians of {args.iters} passes{rounds})")
    print("|---|---|---|---|---|")
    for i, (ort_us, (name, mx_us)) in enumerate(zip(ort, mx)):
        print(f"| {i} | {name} | {ort_us:.0f} | {mx_us:.0f} | {mx_us / ort_us:.2f} |")
    total_ort, total_mx = sum(ort), sum(us for _, us in mx)
    print(f"| | all convolutions | {total_ort:.0f} | {total_mx:.0f} | {total_mx / total_ort:.2f} |")
    if other_ort:
        print(f"| | ONNX Runtime's other Conv kernels ({len(other_ort)}: BatchNorms it runs as "
              f"1x1 convolutions) | {sum(other_ort):.0f} | | |")


if __name__ == "__main__":
    main()
