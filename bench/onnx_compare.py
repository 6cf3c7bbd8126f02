"""mxlite bench beside ONNX Runtime and PyTorch on the ONNX benchmark models (run by onnx_compare.sh).

For every model, batch and thread count, each runtime runs as its own process in rounds, the
runtimes alternating (the order rotates each round), and each process reports its p50 latency
over --iters passes after --warmup. The table shows the median of the rounds' p50s, ratios
(mxlite time / peer time: above 1 mxlite is slower) and GFLOP/s (convolutions and linear layers).

Runtimes: mxlite (`mxlite bench`, the environment as given); onnxruntime (as given); pytorch (as
given); pytorch-best (as a careful user runs it: jemalloc with decay off, OPENBLAS_CORETYPE unset,
OPENBLAS_NUM_THREADS = threads, traced and torch.jit.optimize_for_inference).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIMES = ["mxlite", "onnxruntime", "pytorch", "pytorch-best"]
NAMES = {"mxlite": "mxlite", "onnxruntime": "ONNX Runtime", "pytorch": "PyTorch",
         "pytorch-best": "PyTorch best"}


def command(runtime, args, meta, model, batch, threads, iters):
    common = ["--batch", str(batch), "--threads", str(threads), "--warmup", str(args.warmup),
              "--iters", str(iters)]
    env = dict(os.environ)
    if runtime == "mxlite":
        return [args.mxlite, "bench", meta["onnx"]] + common, env
    peer = [os.path.join(HERE, "onnx_peer.py")]
    if runtime == "onnxruntime":
        return [sys.executable] + peer + ["onnxruntime", model, "--onnx", meta["onnx"]] + common, env
    cmd = ["/usr/bin/python3"] + peer + ["pytorch", model, "--onnx", meta["onnx"]] + common
    if runtime == "pytorch-best":
        env.pop("OPENBLAS_CORETYPE", None)
        env.update({"LD_PRELOAD": "libjemalloc.so.2",
                    "MALLOC_CONF": "dirty_decay_ms:-1,muzzy_decay_ms:-1",
                    "OPENBLAS_NUM_THREADS": str(threads)})
        cmd.append("--jit")
    return cmd, env


def p50_ms(cmd, env):
    result = subprocess.run(cmd, env=env, cwd=HERE, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{result.stdout}\n{result.stderr}")
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
    args = parser.parse_args()
    meta = json.load(open(os.path.join(args.models_dir, "models.json")))
    runtimes = ["mxlite"] + [r for r in RUNTIMES if r in args.runtimes and r != "mxlite"]
    peers = runtimes[1:]

    print("| model | batch | threads | " + " | ".join(f"{NAMES[r]} ms" for r in runtimes) + " | "
          + " | ".join(f"mxlite / {NAMES[r]}" for r in peers)
          + " | GFLOP/s " + ", ".join(NAMES[r] for r in runtimes) + " |")
    print("|---" * (4 + len(runtimes) + len(peers)) + "|")
    for model in args.models:
        for batch in args.batches:
            for threads in args.threads:
                iters = max(5, args.images // batch)
                times = {runtime: [] for runtime in runtimes}
                for round_index in range(args.rounds):
                    shift = round_index % len(runtimes)
                    for runtime in runtimes[shift:] + runtimes[:shift]:
                        cmd, env = command(runtime, args, meta[model], model, batch, threads, iters)
                        times[runtime].append(p50_ms(cmd, env))
                    print(f"  {model} batch {batch} threads {threads} round {round_index + 1}: "
                          + ", ".join(f"{r} {times[r][-1]:.2f}" for r in runtimes), file=sys.stderr)
                med = {runtime: statistics.median(values) for runtime, values in times.items()}
                gflops = {r: meta[model]["flops_per_image"] * batch / (med[r] * 1e-3) / 1e9
                          for r in runtimes}
                print(f"| {model} | {batch} | {threads} | "
                      + " | ".join(f"{med[r]:.2f}" for r in runtimes) + " | "
                      + " | ".join(f"{med['mxlite'] / med[r]:.2f}" for r in peers) + " | "
                      + ", ".join(f"{gflops[r]:.1f}" for r in runtimes) + " |", flush=True)


if __name__ == "__main__":
    main()
