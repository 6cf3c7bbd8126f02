"""The Markdown table of bench/conv_planning.sh from its `mxlite bench --compare-plan` outputs.

    python3 bench/conv_planning_report.py OUT_DIR MODEL:BATCH ...
    python3 bench/conv_planning_report.py --rounds DIR1,DIR2,... MODEL:BATCH ...

Reads OUT_DIR/<model>.<batch>.txt and prints one row per model and batch: per plan the measured
median latency, the planner's prediction for the costed work (convolutions, pooling, layout
transforms), the layers it runs NHWC and NCHW16c and the transforms it inserted (outputs of
builds before NCHW16c, whose summaries have no NCHW16c count, read 0 there); then the measured speedup of
global over local and whether the global optimum is proven. With --rounds, the same comparison
repeated in several folders (each round binds, tunes and plans afresh): per model and batch the
median of each plan's measured latency, every round's speedup, and their median.
"""
import os
import re
import statistics
import sys

LINE = re.compile(r"^(local|global): ([\d.]+) ms \(predicted ([\d.]+) ms\) .*?"
                  r"(\d+) of (\d+) layers NHWC, (?:(\d+) NCHW16c, )?(\d+) transforms; .*?"
                  r"none ([\d.]+) ms")


def parse(path):
    plans = {}
    with open(path) as f:
        for line in f:
            match = LINE.match(line)
            if match:
                plan, measured, predicted, nhwc, layers, blocked, transforms, none = match.groups()
                plans[plan] = {"measured": float(measured), "predicted": float(predicted),
                               "nhwc": int(nhwc), "blocked": int(blocked or 0),
                               "layers": int(layers),
                               "transforms": int(transforms), "none": float(none),
                               "proven": "proven optimal" in line}
    return plans


def rounds_table(out_dirs, configs):
    print("| model | batch | rounds | local measured (median) | global measured (median) "
          "| global / local speedup per round | median speedup |")
    print("|---|---|---|---|---|---|---|")
    for config in configs:
        model, batch = config.rsplit(":", 1)
        paths = [os.path.join(d, f"{model}.{batch}.txt") for d in out_dirs]
        runs = [parse(path) for path in paths if os.path.exists(path)]
        runs = [plans for plans in runs if set(plans) == {"local", "global"}]
        if not runs:
            print(f"| {model} | {batch} | 0 | (no result) |")
            continue
        local = [plans["local"]["measured"] for plans in runs]
        best = [plans["global"]["measured"] for plans in runs]
        speedups = sorted(l / g for l, g in zip(local, best))
        print(f"| {model} | {batch} | {len(runs)} | {statistics.median(local):.2f} ms "
              f"| {statistics.median(best):.2f} ms "
              f"| {' '.join(f'{x:.2f}' for x in speedups)} "
              f"| {statistics.median(speedups):.2f}x |")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    if sys.argv[1] == "--rounds":
        rounds_table(sys.argv[2].split(","), sys.argv[3:])
        return
    out_dir = sys.argv[1]
    print("| model | batch | local measured (predicted) | local NHWC / NCHW16c / transforms "
          "| global measured (predicted) | global NHWC / NCHW16c / transforms | none predicted "
          "| global / local speedup | proven optimal |")
    print("|---|---|---|---|---|---|---|---|---|")
    for config in sys.argv[2:]:
        model, batch = config.rsplit(":", 1)
        plans = parse(os.path.join(out_dir, f"{model}.{batch}.txt"))
        if set(plans) != {"local", "global"}:
            print(f"| {model} | {batch} | (no result: see {model}.{batch}.txt) |")
            continue
        local, best = plans["local"], plans["global"]
        print(f"| {model} | {batch} "
              f"| {local['measured']:.1f} ms ({local['predicted']:.1f}) "
              f"| {local['nhwc']}/{local['blocked']}/{local['layers']}, {local['transforms']} "
              f"| {best['measured']:.1f} ms ({best['predicted']:.1f}) "
              f"| {best['nhwc']}/{best['blocked']}/{best['layers']}, {best['transforms']} "
              f"| {best['none']:.1f} ms "
              f"| {local['measured'] / best['measured']:.2f}x "
              f"| {'yes' if best['proven'] else 'no'} |")


if __name__ == "__main__":
    main()
