#!/usr/bin/python3
"""Joins the JSON lines of bench/conv_tuning.sh (mxlite's conv_tuning_bench and PyTorch's
bench/conv_torch.py) into the Markdown tables of bench/RESULTS.md.

usage: conv_tuning_report.py FOLDER   (with layers.jsonl, torch.jsonl, networks.jsonl,
startup.jsonl inside)
"""
import json
import math
import statistics
import sys
from pathlib import Path


def rows(path):
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]


def geomean(values):
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def layer_table(layers, torch):
    best_torch = {(r["layer"], r["batch"], r["threads"]): min(r["eager_ms"], r["jit_ms"])
                  for r in torch}
    print("| Layer | Direction | Threads | im2col ms | tuned pick | tuned ms | tuned speedup "
          "| heuristic pick | heuristic / tuned | PyTorch ms | PyTorch / tuned |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in layers:
        peer = best_torch.get((r["layer"], r["batch"], r["threads"])) \
            if r["direction"] == "forward" else None
        peer_text = "%.3f | %.2f" % (peer, peer / r["tuned_ms"]) if peer else "- | -"
        print("| %s | %s | %d | %.3f | %s | %.3f | %.2f | %s | %.2f | %s |" % (
            r["layer"], r["direction"], r["threads"], r["im2col_ms"], r["tuned"], r["tuned_ms"],
            r["im2col_ms"] / r["tuned_ms"], r["heuristic"], r["heuristic_ms"] / r["tuned_ms"],
            peer_text))
    print()
    for threads in sorted({r["threads"] for r in layers}):
        mine = [r for r in layers if r["threads"] == threads]
        three = [r for r in mine if r["layer"].startswith("3x3")]
        print("- %d thread%s: tuned vs im2col geomean on the 3x3 layers %.2f (forward %.2f); "
              "all layers and directions %.2f; heuristic within %.0f%% of the tuned pick on %d "
              "of %d problems (worst %.2f)" % (
                  threads, "" if threads == 1 else "s",
                  geomean(r["im2col_ms"] / r["tuned_ms"] for r in three),
                  geomean(r["im2col_ms"] / r["tuned_ms"] for r in three
                          if r["direction"] == "forward"),
                  geomean(r["im2col_ms"] / r["tuned_ms"] for r in mine), 10,
                  sum(r["heuristic_ms"] <= 1.1 * r["tuned_ms"] for r in mine), len(mine),
                  max(r["heuristic_ms"] / r["tuned_ms"] for r in mine)))
        forward = [r for r in mine if r["direction"] == "forward"
                   and (r["layer"], r["batch"], threads) in best_torch]
        if forward:
            print("  forward vs PyTorch at its best (PyTorch ms / mxlite tuned ms): geomean %.2f, "
                  "layers at least as fast: %d of %d" % (
                      geomean(best_torch[(r["layer"], r["batch"], threads)] / r["tuned_ms"]
                              for r in forward),
                      sum(best_torch[(r["layer"], r["batch"], threads)] >= r["tuned_ms"]
                          for r in forward), len(forward)))
    print()


def network_table(networks):
    print("| Network | Threads | im2col only ms | heuristic (off) ms | tuned ms | tuned speedup |")
    print("| --- | --- | --- | --- | --- | --- |")
    keyed = {}
    for r in networks:
        keyed.setdefault((r["network"], r["threads"]), {})[r["plan"]] = r["forward_ms"]
    for (network, threads), plans in keyed.items():
        print("| %s | %d | %.2f | %.2f | %.2f | %.2f |" % (
            network, threads, plans["im2col"], plans["heuristic"], plans["tuned"],
            plans["im2col"] / plans["tuned"]))
    print()


def startup_table(startup):
    print("| Threads | cold DB ms | warm DB ms | tuning off ms | warm / off |")
    print("| --- | --- | --- | --- | --- |")
    for threads in sorted({r["threads"] for r in startup}):
        median = {plan: statistics.median(r["ms"] for r in startup
                                          if r["threads"] == threads and r["startup"] == plan)
                  for plan in ("cold", "warm", "off")}
        print("| %d | %.0f | %.0f | %.0f | %.2f |" % (
            threads, median["cold"], median["warm"], median["off"],
            median["warm"] / median["off"]))
    print()


def main():
    folder = Path(sys.argv[1])
    layer_table(rows(folder / "layers.jsonl"), rows(folder / "torch.jsonl"))
    network_table(rows(folder / "networks.jsonl"))
    startup_table(rows(folder / "startup.jsonl"))


if __name__ == "__main__":
    main()
