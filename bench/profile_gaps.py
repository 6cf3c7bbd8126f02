"""Time an mxlite pass spends outside its operators, from a profile.json (MXNET_PROFILER_AUTOSTART=1).

    MXNET_PROFILER_AUTOSTART=1 build/bin/mxlite bench MODEL.onnx --threads 1 --warmup 5 --iters 60
    python3 bench/profile_gaps.py profile.json [--skip 3]

Passes are told apart by their first operator event (every pass runs the same steps in the same
order). Per pass: the span from its first operator's start to its last operator's end, the sum of
its operators' durations (span - sum = gaps between operators inside the pass: pushing, waking
workers, bulk segment bookkeeping), and the gap from its last operator's end to the next pass's
first operator's start (waiting for the outputs, pushing the next pass before its first operator
can start). Prints the medians over the passes after the first --skip ones, then the inner gaps
with the largest medians.
"""
import argparse
import collections
import json
import signal
import statistics


def split_passes(events):
    first = events[0]["name"]
    passes, current = [], []
    for event in events:
        if event["name"] == first and current:
            passes.append(current)
            current = []
        current.append(event)
    passes.append(current)
    return passes


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
    parser = argparse.ArgumentParser()
    parser.add_argument("profile")
    parser.add_argument("--skip", type=int, default=3, help="leading passes left out (warm-up)")
    parser.add_argument("--top", type=int, default=8, help="largest inner gaps to list")
    args = parser.parse_args()
    events = sorted((e for e in json.load(open(args.profile))["traceEvents"]
                     if e.get("ph") == "X" and e.get("cat") == "operator"),
                    key=lambda e: e["ts"])
    passes = split_passes(events)[args.skip:]
    if len(passes) < 2:
        raise SystemExit(f"{args.profile}: fewer than two passes after skipping {args.skip}")
    spans, sums, between = [], [], []
    inner = collections.defaultdict(list)
    for index, events_of_pass in enumerate(passes):
        start = events_of_pass[0]["ts"]
        end = max(e["ts"] + e["dur"] for e in events_of_pass)
        spans.append(end - start)
        sums.append(sum(e["dur"] for e in events_of_pass))
        if index + 1 < len(passes):
            between.append(passes[index + 1][0]["ts"] - end)
        for before, after in zip(events_of_pass, events_of_pass[1:]):
            inner[after["name"]].append(after["ts"] - (before["ts"] + before["dur"]))
    span, total = statistics.median(spans), statistics.median(sums)
    print(f"{len(passes)} passes, {len(passes[0])} operator events each (medians, us): "
          f"span {span:.0f}, operators {total:.0f}, gaps inside {span - total:.0f}, "
          f"between passes {statistics.median(between):.0f}")
    largest = sorted(((statistics.median(v), name) for name, v in inner.items()), reverse=True)
    for gap, name in largest[:args.top]:
        print(f"  {gap:8.1f} us before {name}")


if __name__ == "__main__":
    main()
