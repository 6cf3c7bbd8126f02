"""Two or more plans of one model, node by node: what the planner predicted, what a pass measured.

    MXNET_TUNING_REPORT=layers MXNET_PROFILER_AUTOSTART=1 mxlite bench MODEL.onnx --plan none \
        --warmup 0 --iters 20 >none/report.log        # run inside none/, which gets profile.json
    ... the same with --plan global inside global/ ...
    python3 bench/profile_compare.py none=none global=global

Each DIR holds profile.json (MXNET_PROFILER_AUTOSTART=1; profiled steps are synchronised one by
one, so a GPU step's duration is its launch plus its kernels) and report.log, the bench output
with MXNET_TUNING_REPORT=layers, whose plan lines give each costed node's layout and predicted
time ("  /conv1/Conv (Convolution): NHWC direct_nhwc, 2.438 ms", "  transform NAME: ..., 0.024
ms"; a weight's transform marked "once", a constant at inference, is not a per-pass cost and is
left out). Only the timed passes count (their number from the bench output's throughput line; binding
runs graphs too); each node's first event in them is left out. Prints per plan the measured and
predicted total of the costed nodes and of the rest, then per node (in the order of the plan lines, then nodes without
one) layout, predicted and measured ms.
"""
import collections
import json
import os
import re
import signal
import sys

PLAN_LINE = re.compile(r"^  (\S+) \((\w+)\): (\S+)(?: (\S+))?, ([0-9.]+) ms$")
TRANSFORM_LINE = re.compile(r"^  transform (\S+): .*, ([0-9.]+) ms$")


def read_predictions(path):
    """{node: (layout and algorithm, predicted ms)} from the bench output's plan lines."""
    predictions = {}
    if not os.path.exists(path):
        return predictions
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        match = PLAN_LINE.match(line)
        if match:
            name, _, layout, algorithm, ms = match.groups()
            predictions[name] = (f"{layout} {algorithm or ''}".strip(), float(ms))
            continue
        match = TRANSFORM_LINE.match(line)
        if match:
            predictions[match.group(1)] = ("transform", float(match.group(2)))
    return predictions


def read_passes(path):
    """The number of timed passes the bench output reports ("(batch 1, 50 passes in 0.1 s)")."""
    if os.path.exists(path):
        match = re.search(r"\(batch \d+, (\d+) passes in", open(path, errors="replace").read())
        if match:
            return int(match.group(1))
    return None


def timed_window(events, passes):
    """Events of the timed passes only: binding also runs graphs (the planner times nodes and
    blocks under the same names), and they are in the profile too. The last event closes the last
    pass; its node ran once per pass, so the end of its run `passes + 1` from the end opens the
    window."""
    if not passes:
        return events
    last = max(events, key=lambda e: e["ts"])["name"]
    ends = sorted(e["ts"] + e["dur"] for e in events if e["name"] == last)
    if len(ends) <= passes:
        return events
    start = ends[-passes - 1]
    return [e for e in events if e["ts"] >= start]


def read_measured(path, passes):
    """{node: median ms per pass} and the node order of the first timed pass."""
    events = [e for e in json.load(open(path))["traceEvents"]
              if e.get("ph") == "X" and e.get("cat") == "operator"]
    events = timed_window(events, passes)
    by_node = collections.defaultdict(list)
    order = []
    for event in sorted(events, key=lambda e: e["ts"]):
        if event["name"] not in by_node:
            order.append(event["name"])
        by_node[event["name"]].append(event["dur"])
    medians = {}
    for name, durations in by_node.items():
        kept = sorted(durations[1:] if len(durations) > 1 else durations)
        medians[name] = kept[len(kept) // 2] / 1e3
    return medians, order


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    plans = []
    for argument in sys.argv[1:]:
        label, _, folder = argument.partition("=")
        passes = read_passes(os.path.join(folder, "report.log"))
        measured, order = read_measured(os.path.join(folder, "profile.json"), passes)
        plans.append((label, measured, order, read_predictions(os.path.join(folder, "report.log"))))
    if not plans:
        sys.exit(__doc__)

    # A fused block runs as one op named after its depthwise convolution: its neighbours have a
    # prediction and no measurement, so totals (not rows) are what compare there.
    print("| plan | costed nodes: predicted ms | costed nodes: measured ms | other nodes: measured ms |")
    print("|---|---|---|---|")
    for label, measured, _, predicted in plans:
        print(f"| {label} | {sum(ms for _, ms in predicted.values()):.3f} | "
              f"{sum(t for n, t in measured.items() if n in predicted):.3f} | "
              f"{sum(t for n, t in measured.items() if n not in predicted):.3f} |")

    # The plan lines' order (the graph's), then nodes that only ran.
    names = []
    for _, _, order, predicted in plans:
        names += [name for name in predicted if name not in names]
    for _, _, order, _ in plans:
        names += [name for name in order if name not in names]
    header = " | ".join(f"{label}: layout | predicted | measured" for label, *_ in plans)
    print(f"\n| node | {header} |")
    print("|---|" + "---|---|---|" * len(plans))
    for name in names:
        cells = []
        for _, measured, _, predicted in plans:
            layout, guess = predicted.get(name, ("", None))
            cells.append(layout or "-")
            cells.append(f"{guess:.3f}" if guess is not None else "-")
            cells.append(f"{measured[name]:.3f}" if name in measured else "-")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
