"""Where an mxlite run spends its time: a profile.json (MXNET_PROFILER_AUTOSTART=1) summed by op.

    MXNET_PROFILER_AUTOSTART=1 build/bin/mxlite bench MODEL.onnx --iters 10 --warmup 0
    python3 bench/profile_summary.py profile.json

Every operator event is attributed to its op type (the last part of the node name, as PyTorch's
exporter names nodes "/layer1/layer1.0/conv1/Conv"; digits and "_N" suffixes dropped). Each
node's first event (the first pass, which also pays first-touch costs) is left out when the node
ran more than once. Prints milliseconds per pass and the share of all operator time per op type,
then the slowest nodes.
"""
import collections
import json
import re
import signal
import sys


def op_type(name):
    last = name.rstrip("/").split("/")[-1]
    return re.sub(r"(_\d+)+$", "", last)


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
    events = [e for e in json.load(open(sys.argv[1]))["traceEvents"]
              if e.get("ph") == "X" and e.get("cat") == "operator"]
    by_node = collections.defaultdict(list)
    for event in sorted(events, key=lambda e: e["ts"]):
        by_node[event["name"]].append(event["dur"])
    passes = max(len(durations) for durations in by_node.values())
    kept = {name: (d[1:] if len(d) > 1 else d) for name, d in by_node.items()}
    counted = max(len(d) for d in kept.values())
    by_type = collections.Counter()
    for name, durations in kept.items():
        by_type[op_type(name)] += sum(durations)
    total = sum(by_type.values())
    print(f"{passes} passes in the profile, {counted} counted; operator time per pass "
          f"{total / counted / 1e3:.2f} ms")
    print("| op type | ms per pass | share |")
    print("|---|---|---|")
    for kind, micros in by_type.most_common():
        print(f"| {kind} | {micros / counted / 1e3:.2f} | {100 * micros / total:.1f}% |")
    print("\nslowest nodes (ms per pass):")
    slowest = sorted(kept.items(), key=lambda item: -sum(item[1]) / len(item[1]))[:10]
    for name, durations in slowest:
        print(f"  {sum(durations) / len(durations) / 1e3:8.2f}  {name}")


if __name__ == "__main__":
    main()
