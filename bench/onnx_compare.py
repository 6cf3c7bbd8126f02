"""mxlite bench beside its CPU peers on the ONNX benchmark models (run by onnx_compare.sh, zoo_compare.sh).

For every model, batch and thread count, each runtime runs as its own process in rounds, the
runtimes alternating (the order rotates each round), and each process reports its p50 latency
over --iters passes after --warmup (one-thread runs pinned to the first CPU). The table shows the
median of the rounds' p50s, ratios (mxlite time / peer time: above 1 mxlite is slower) and GFLOP/s
(convolutions and linear layers).

Runtimes: mxlite (`mxlite bench`, the environment as given); onnxruntime, openvino and ncnn (as
bench/onnx_peer.py runs them; ncnn needs --ncnn-dir, the output of bench/ncnn_models.py, and
skips a model it did not convert faithfully; a peer that fails on a model gets n/a there); pytorch
(as given); pytorch-best (as a careful user runs it: jemalloc with decay off, OPENBLAS_CORETYPE
unset, OPENBLAS_NUM_THREADS = threads, traced and torch.jit.optimize_for_inference).

With more than one of onnxruntime, openvino and ncnn, a column gives mxlite / the faster of them,
and the run ends with the line `CPU zoo geomean mxlite / faster peer: X over N rows; worst: MODEL
(threads T, batch B) Y`. --results FILE puts the table, the command and that line into FILE
between the lines `<!-- zoo-compare:begin -->` and `<!-- zoo-compare:end -->`.
"""
import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIMES = ["mxlite", "onnxruntime", "openvino", "ncnn", "pytorch", "pytorch-best"]
NAMES = {"mxlite": "mxlite", "onnxruntime": "ONNX Runtime", "openvino": "OpenVINO", "ncnn": "ncnn",
         "pytorch": "PyTorch", "pytorch-best": "PyTorch best"}
CPU_PEERS = ["onnxruntime", "openvino", "ncnn"]  # the engines of mxlite's kind


def command(runtime, args, meta, model, batch, threads, iters):
    common = ["--batch", str(batch), "--threads", str(threads), "--warmup", str(args.warmup),
              "--iters", str(iters)]
    env = dict(os.environ)
    if runtime == "mxlite":
        return [args.mxlite, "bench", meta["onnx"]] + common, env
    peer = [os.path.join(HERE, "onnx_peer.py")]
    if runtime in ("onnxruntime", "openvino"):
        return [sys.executable] + peer + [runtime, model, "--onnx", meta["onnx"]] + common, env
    if runtime == "ncnn":
        prefix = os.path.join(args.ncnn_dir, model)
        return ([sys.executable] + peer + ["ncnn", model, "--onnx", meta["onnx"], "--ncnn", prefix]
                + common, env)
    cmd = ["/usr/bin/python3"] + peer + ["pytorch", model, "--onnx", meta["onnx"]] + common
    if runtime == "pytorch-best":
        env.pop("OPENBLAS_CORETYPE", None)
        env.update({"LD_PRELOAD": "libjemalloc.so.2",
                    "MALLOC_CONF": "dirty_decay_ms:-1,muzzy_decay_ms:-1",
                    "OPENBLAS_NUM_THREADS": str(threads)})
        cmd.append("--jit")
    return cmd, env


# One-thread runs of every runtime are pinned to the first CPU (taskset, where there is one): a
# machine's cores can differ (the developer box's two vCPUs by up to 1.5x), and the scheduler
# would otherwise pick per process.
PIN = ["taskset", "-c", "0"] if shutil.which("taskset") else []


class PeerFailed(Exception):
    """A peer runtime could not run a model (its cells read n/a)."""


def p50_ms(cmd, env, runtime):
    result = subprocess.run(cmd, env=env, cwd=HERE, capture_output=True, text=True)
    if result.returncode != 0:
        if runtime == "mxlite":
            sys.exit(f"failed: {' '.join(cmd)}\n{result.stdout}\n{result.stderr}")
        last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
        print(f"  {runtime} cannot run this model: {last}", file=sys.stderr)
        raise PeerFailed(runtime)
    match = re.search(r"latency p50: ([0-9.]+) ms", result.stdout)
    if not match:
        sys.exit(f"no p50 line from {' '.join(cmd)}:\n{result.stdout}")
    return float(match.group(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models-dir", required=True)
    parser.add_argument("--mxlite", required=True)
    parser.add_argument("--models", nargs="+", default=["resnet18", "mobilenet_v2"])
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 8])
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--images", type=int, default=80,
                        help="images per timed process: iters = max(5, images / batch)")
    parser.add_argument("--runtimes", nargs="+", choices=RUNTIMES, default=RUNTIMES,
                        help="which to run (mxlite always runs: the ratios are to it)")
    parser.add_argument("--ncnn-dir", help="bench/ncnn_models.py's OUT_DIR/ncnn (for ncnn)")
    parser.add_argument("--results", help="a Markdown file whose zoo-compare section gets the table")
    args = parser.parse_args()
    meta = json.load(open(os.path.join(args.models_dir, "models.json")))
    runtimes = ["mxlite"] + [r for r in RUNTIMES if r in args.runtimes and r != "mxlite"]
    if "ncnn" in runtimes and not args.ncnn_dir:
        parser.error("ncnn needs --ncnn-dir")
    ncnn_ok = (json.load(open(os.path.join(args.ncnn_dir, "models.json")))
               if "ncnn" in runtimes else {})
    peers = runtimes[1:]
    cpu_peers = [r for r in peers if r in CPU_PEERS]
    best_column = len(cpu_peers) > 1

    lines = ["| model | batch | threads | " + " | ".join(f"{NAMES[r]} ms" for r in runtimes) + " | "
             + " | ".join(f"mxlite / {NAMES[r]}" for r in peers)
             + (" | mxlite / faster peer" if best_column else "")
             + " | GFLOP/s " + ", ".join(NAMES[r] for r in runtimes) + " |",
             "|---" * (4 + len(runtimes) + len(peers) + best_column) + "|"]
    print("\n".join(lines), flush=True)
    to_best = []  # (ratio, model, threads, batch)
    for model in args.models:
        runs = [r for r in runtimes if r != "ncnn" or ncnn_ok.get(model, {}).get("ok")]
        for batch in args.batches:
            for threads in args.threads:
                iters = max(5, args.images // batch)
                times = {runtime: [] for runtime in runs}
                for round_index in range(args.rounds):
                    shift = round_index % len(runs)
                    for runtime in runs[shift:] + runs[:shift]:
                        if runtime not in times:
                            continue  # failed in an earlier round
                        cmd, env = command(runtime, args, meta[model], model, batch, threads, iters)
                        if threads == 1 and PIN:
                            cmd = PIN + cmd
                        try:
                            times[runtime].append(p50_ms(cmd, env, runtime))
                        except PeerFailed:
                            del times[runtime]
                    print(f"  {model} batch {batch} threads {threads} round {round_index + 1}: "
                          + ", ".join(f"{r} {times[r][-1]:.2f}" for r in runs if r in times),
                          file=sys.stderr)
                med = {runtime: statistics.median(values) for runtime, values in times.items()}
                cell = lambda r, text: text if r in med else "n/a"
                gflops = {r: meta[model]["flops_per_image"] * batch / (med[r] * 1e-3) / 1e9
                          for r in med}
                line = (f"| {model} | {batch} | {threads} | "
                        + " | ".join(cell(r, f"{med.get(r, 0):.2f}") for r in runtimes) + " | "
                        + " | ".join(cell(r, f"{med['mxlite'] / med.get(r, 1):.2f}") for r in peers))
                ran_peers = [r for r in cpu_peers if r in med]
                if best_column:
                    ratio = med["mxlite"] / min(med[r] for r in ran_peers)
                    to_best.append((ratio, model, threads, batch))
                    line += f" | {ratio:.2f}"
                line += " | " + ", ".join(cell(r, f"{gflops.get(r, 0):.1f}") for r in runtimes) + " |"
                lines.append(line)
                print(line, flush=True)
    if best_column:
        geomean = math.exp(sum(math.log(r[0]) for r in to_best) / len(to_best))
        worst = max(to_best)
        closing = (f"CPU zoo geomean mxlite / faster peer: {geomean:.2f} over {len(to_best)} rows; "
                   f"worst: {worst[1]} (threads {worst[2]}, batch {worst[3]}) {worst[0]:.2f}")
        lines += ["", closing]
        print("\n" + closing)
    if args.results:
        write_section(args.results, lines)


def write_section(path, lines):
    """Replaces the zoo-compare section of `path` (written to a temporary name, then renamed)."""
    begin, end = "<!-- zoo-compare:begin -->", "<!-- zoo-compare:end -->"
    text = open(path).read()
    if begin not in text or end not in text:
        sys.exit(f"{path} has no {begin} ... {end} section to write the table into")
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    machine = os.environ.get("MXLITE_ZOO_HEADER", "")
    body = "\n".join(([machine, ""] if machine else []) + lines)
    with open(path + ".tmp", "w") as f:
        f.write(head + begin + "\n" + body + "\n" + end + tail)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
