"""How far an mxlite output is from PyTorch's, both as TensorProto files (bench/tensor_pb.py).

    python3 output_error.py ACTUAL.pb EXPECTED.pb LABEL [--limit L]

Prints one line: the relative error max |actual - expected| / max |expected| over all elements and
whether the argmax over axis 1 agrees. With --limit, exits 1 when the error is above it (and says
FAIL); without, only reports. A missing or unreadable ACTUAL file is an error naming it.
"""
import sys

import numpy as np

import tensor_pb


def main():
    args = sys.argv[1:]
    limit = None
    if "--limit" in args:
        at = args.index("--limit")
        limit = float(args[at + 1])
        del args[at:at + 2]
    if len(args) != 3:
        sys.exit(__doc__)
    actual_path, expected_path, label = args
    try:
        _, actual = tensor_pb.read(actual_path)
    except OSError as e:
        sys.exit(f"{label}: no output ({e})")
    _, expected = tensor_pb.read(expected_path)
    if actual.shape != expected.shape:
        sys.exit(f"{label}: output shape {actual.shape}, expected {expected.shape}")
    error = np.abs(actual.astype(np.float64) - expected).max() / np.abs(expected).max()
    verdict = ""
    if limit is not None:
        verdict = f" ({'ok' if error <= limit else 'FAIL'}: limit {limit:g})"
    print(f"{label}: output {actual.shape}, max|mxlite-pytorch|/max|pytorch| = {error:.2e}{verdict}; "
          f"argmax equal: {bool((actual.argmax(1) == expected.argmax(1)).all())}")
    sys.exit(0 if limit is None or error <= limit else 1)


if __name__ == "__main__":
    main()
