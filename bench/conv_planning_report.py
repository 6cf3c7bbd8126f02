"""The Markdown table of bench/conv_planning.sh from its `mxlite bench --compare-plan` outputs.

    python3 bench/conv_planning_report.py OUT_DIR MODEL:BATCH ...

Reads OUT_DIR/<model>.<batch>.txt and prints one row per model and batch: per plan the measured
median latency, the planner's prediction for the costed work (convolutions, pooling, layout
transforms), the layers it runs NHWC and the transforms it inserted; then the measured speedup of
global over local and whether the global optimum is proven.
"""
import os
import re
import sys

LINE = re.compile(r"^(local|global): ([\d.]+) ms \(predicted ([\d.]+) ms\) .*?"
                  r"(\d+) of (\d+) layers NHWC, (\d+) transforms; .*?none ([\d.]+) ms")


def parse(path):
    plans = {}
    with open(path) as f:
        for line in f:
            match = LINE.match(line)
            if match:
                plan, measured, predicted, nhwc, layers, transforms, none = match.groups()
                plans[plan] = {"measured": float(measured), "predicted": float(predicted),
                               "nhwc": int(nhwc), "layers": int(layers),
                               "transforms": int(transforms), "none": float(none),
                               "proven": "proven optimal" in line}
    return plans


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    print("| model | batch | local measured (predicted) | local NHWC / transforms "
          "| global measured (predicted) | global NHWC / transforms | none predicted "
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
              f"| {local['nhwc']}/{local['layers']}, {local['transforms']} "
              f"| {best['measured']:.1f} ms ({best['predicted']:.1f}) "
              f"| {best['nhwc']}/{best['layers']}, {best['transforms']} "
              f"| {best['none']:.1f} ms "
              f"| {local['measured'] / best['measured']:.2f}x "
              f"| {'yes' if best['proven'] else 'no'} |")


if __name__ == "__main__":
    main()
