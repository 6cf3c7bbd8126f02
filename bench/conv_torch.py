#!/usr/bin/python3
"""PyTorch CPU on the layers of bench/conv_bench.cc: Conv2d forward (float32, with bias) on the
ResNet-50 layer set, batch 1 and 16, GFLOP/s from the median of repeated timed runs.

Two variants per layer: eager F.conv2d under no_grad, and the module after
torch.jit.optimize_for_inference (freezing plus oneDNN weight prepacking) -- the peer at its best.

Run with Debian's python3-torch (the system interpreter). Each thread count runs in its own
process with torch.set_num_threads(n) and, unless --keep-openblas-threads, OPENBLAS_NUM_THREADS=n
(OpenBLAS reads it when it loads). The rest of the environment is inherited, so the same script
measures PyTorch as given and at its best (docs/design.md, Testing and benchmarks):

  /usr/bin/python3 bench/conv_torch.py --threads 1 2
  env -u OPENBLAS_CORETYPE LD_PRELOAD=libjemalloc.so.2 \\
      MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1 /usr/bin/python3 bench/conv_torch.py --threads 1 2

--json FILE also writes the results as JSON lines.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# (name, in_channels, out_channels, kernel, stride, pad, size): as in bench/resnet50_layers.h.
LAYERS = [
    ("3x3 64->64 56x56", 64, 64, 3, 1, 1, 56),
    ("1x1 256->64 56x56", 256, 64, 1, 1, 0, 56),
    ("3x3 128->128 28x28", 128, 128, 3, 1, 1, 28),
    ("3x3 256->256 14x14", 256, 256, 3, 1, 1, 14),
    ("1x1 1024->256 14x14", 1024, 256, 1, 1, 0, 14),
    ("7x7 3->64 s2 224x224", 3, 64, 7, 2, 3, 224),
    ("3x3 512->512 7x7", 512, 512, 3, 1, 1, 7),
]
BATCHES = [1, 16]


def median_seconds(fn, repeats, min_repeat_seconds):
    """Median over `repeats` timed repeats of the time per call; each repeat runs long enough."""
    for _ in range(3):
        fn()
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-6)
    calls = max(1, int(min_repeat_seconds / once))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def measure(threads, repeats, min_repeat_seconds):
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    results = []
    for name, cin, cout, kernel, stride, pad, size in LAYERS:
        for batch in BATCHES:
            x = torch.randn(batch, cin, size, size)
            conv = torch.nn.Conv2d(cin, cout, kernel, stride=stride, padding=pad).eval()
            out_size = (size + 2 * pad - kernel) // stride + 1
            flops = 2.0 * batch * cout * out_size * out_size * cin * kernel * kernel
            with torch.no_grad():
                eager = median_seconds(lambda: F.conv2d(x, conv.weight, conv.bias, stride, pad),
                                       repeats, min_repeat_seconds)
                frozen = torch.jit.optimize_for_inference(torch.jit.script(conv))
                jit = median_seconds(lambda: frozen(x), repeats, min_repeat_seconds)
            results.append({"layer": name, "batch": batch, "threads": threads,
                            "eager_gflops": flops / eager / 1e9, "jit_gflops": flops / jit / 1e9,
                            "eager_ms": eager * 1e3, "jit_ms": jit * 1e3})
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--min-repeat-seconds", type=float, default=0.2)
    parser.add_argument("--keep-openblas-threads", action="store_true",
                        help="leave OPENBLAS_NUM_THREADS as the environment has it")
    parser.add_argument("--json", help="also write the results here, one JSON object a line")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:  # one thread count, in a process whose OpenBLAS saw OPENBLAS_NUM_THREADS
        for row in measure(args.threads[0], args.repeats, args.min_repeat_seconds):
            print(json.dumps(row), flush=True)
        return

    rows = []
    for threads in args.threads:
        env = dict(os.environ)
        if not args.keep_openblas_threads:
            env["OPENBLAS_NUM_THREADS"] = str(threads)
        command = [sys.executable, os.path.abspath(__file__), "--worker", "--threads",
                   str(threads), "--repeats", str(args.repeats), "--min-repeat-seconds",
                   str(args.min_repeat_seconds)]
        output = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
        rows += [json.loads(line) for line in output.stdout.splitlines() if line.startswith("{")]

    import torch
    print("PyTorch %s, OPENBLAS_CORETYPE=%s, LD_PRELOAD=%s, MALLOC_CONF=%s" % (
        torch.__version__, os.environ.get("OPENBLAS_CORETYPE", "(unset)"),
        os.environ.get("LD_PRELOAD", "(unset)"), os.environ.get("MALLOC_CONF", "(unset)")))
    print("| Layer | Batch | Threads | eager GFLOP/s | optimize_for_inference GFLOP/s |")
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        print("| %s | %d | %d | %.1f | %.1f |" % (row["layer"], row["batch"], row["threads"],
                                                row["eager_gflops"], row["jit_gflops"]))
    if args.json:
        with open(args.json, "w") as out:
            for row in rows:
                out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
