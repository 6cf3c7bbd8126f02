"""Every torchvision model through mxlite: export at each opset, run, compare with PyTorch.

    /usr/bin/python3 bench/onnx_zoo.py OUT_DIR [--opsets 13 17] [--families F ...]
        [--models M ...] [--mxlite build/bin/mxlite] [--device cpu|gpu] [--jobs N]
        [--results bench/RESULTS.md] [--keep]

Takes every model builder of Debian's torchvision (torchvision.models.list_models for the
classification, segmentation and video families; optical flow, detection and quantized models
excluded), builds it with random weights from a fixed seed (BatchNorm statistics and affine
parameters randomised too, so no BatchNormalization is an identity), exports it with PyTorch's
TorchScript exporter at each opset (constant folding on, as users export; exporter gaps of
PyTorch 1.13 filled by onnx_models.register_missing_symbolics), runs the file with
`mxlite run` on a random input (on the CPU, or with --device gpu on the GPU: every kernel of the
zoo against PyTorch's CPU output), and compares mxlite's output with PyTorch's:

    relative error = max |mxlite - pytorch| / max |pytorch|, must be <= 1e-4.

Inputs: one 224x224 image (classification, segmentation: the "out" map), one clip of 16 frames
(112x112 for the ResNet-style video models, 224x224 for S3D and MViT). Models whose float32 weights
pass 1 GB are skipped with a note (the smallest of their family runs). mxlite runs with tuning off
and no convolution plan (MXNET_CUDNN_AUTOTUNE_DEFAULT=0, MXNET_CONV_PLAN=none: the check is of the
import and the kernels, and the tuner's choices compute the same function).

Prints one table: per model and opset `ok 3.1e-07`, `FAIL 2.0e-02`, or where it stopped (export,
import, run) with the first line of the error. --results FILE puts the table, with the command,
date, commit and machine, between the onnx-zoo markers of FILE. ONNX files are deleted after
their check unless --keep. Each model works in OUT_DIR/NAME; --jobs N checks N models at once
(rows still print in the zoo's order). Exit status 0 when every row passes.
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import re
import resource
import subprocess
import sys
import time

import numpy as np
import torch
import torchvision

import onnx_models
import tensor_pb

LIMIT = 1e-4
MAX_WEIGHT_BYTES = 1e9
# Each model is checked in a child process whose address space is capped, so an exporter that
# runs away (PyTorch 1.13 on MViT-V2 takes over 24 GB) fails its row instead of the whole run.
CHILD_MEMORY_BYTES = 18 << 30
CHILD_SECONDS = 1800
FAMILIES = {
    "classification": torchvision.models,
    "segmentation": torchvision.models.segmentation,
    "video": torchvision.models.video,
}
BEGIN, END = "<!-- onnx-zoo begin -->", "<!-- onnx-zoo end -->"


def builders(families):
    names = []
    for family in families:
        for name in torchvision.models.list_models(module=FAMILIES[family]):
            names.append((family, name))
    return names


def input_shape(family, name):
    if family != "video":
        return (1, 3, 224, 224)
    return (1, 3, 16, 112, 112) if name in ("r3d_18", "mc3_18", "r2plus1d_18") else \
        (1, 3, 16, 224, 224)


def build(family, name, seed):
    torch.manual_seed(seed)
    kwargs = {"weights": None}
    if family == "segmentation":
        kwargs["weights_backbone"] = None
        kwargs["aux_loss"] = False
    if name in ("googlenet", "inception_v3"):
        kwargs.update(aux_logits=False, init_weights=True)
    model = torchvision.models.get_model(name, **kwargs)
    if family == "segmentation":
        model = onnx_models.SegmentationOutput(model)
    return onnx_models.randomise(model)


def first_line(text, limit=160):
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    # mxlite prints `mxlite: error: FILE: what`; PyTorch ends its traceback with the error.
    errors = [line for line in lines if "error" in line.lower()]
    line = (errors or lines or ["(no message)"])[-1]
    line = re.sub(r"\S*/", "", line)  # paths name this machine's folders, not the problem
    line = re.sub(r"^mxlite: error: \S+: ", "", line)
    return line if len(line) <= limit else line[:limit - 3] + "..."


def unlimited_address_space():
    """For mxlite's process: CUDA reserves far more address space than the child's cap allows."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


def check(model, x, expected, opset, out_dir, mxlite, device, keep):
    """One cell of the table: ok/FAIL with the error, or where it stopped."""
    path = os.path.join(out_dir, f"model_opset{opset}.onnx")
    onnx_models.register_missing_symbolics()
    try:
        torch.onnx.export(model, x, path + ".tmp", opset_version=opset, input_names=["input"],
                          output_names=["output"], do_constant_folding=True,
                          **onnx_models.legacy_exporter())
        os.replace(path + ".tmp", path)
    except Exception as e:  # PyTorch's exporter: any failure is a cell, not the end of the run
        if os.path.exists(path + ".tmp"):
            os.remove(path + ".tmp")
        return f"export failed: {first_line(str(e) or type(e).__name__)}", False
    run_dir = os.path.join(out_dir, f"run_opset{opset}")
    env = dict(os.environ, MXNET_CUDNN_AUTOTUNE_DEFAULT="0", MXNET_CONV_PLAN="none",
               MXNET_HOME=os.path.join(out_dir, "mxnet_home"))
    result = subprocess.run(
        [mxlite, "run", path, "--device", device, "--input",
         "input=" + os.path.join(out_dir, "input.pb"), "--output-dir", run_dir], env=env,
        capture_output=True, text=True, preexec_fn=unlimited_address_space)
    if not keep:
        os.remove(path)
    if result.returncode != 0:
        return f"mxlite: {first_line(result.stderr)}", False
    _, actual = tensor_pb.read(os.path.join(run_dir, "output_0.pb"))
    if actual.shape != expected.shape:
        return f"FAIL: shape {actual.shape}, PyTorch {expected.shape}", False
    error = float(np.abs(actual.astype(np.float64) - expected).max() / np.abs(expected).max())
    return (f"ok {error:.1e}", True) if error <= LIMIT else (f"FAIL {error:.1e}", False)


def run_header(command):
    """Date, commit, machine and versions of a run, taken when it starts."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip() or "unknown"
    except OSError:  # no git on the machine (a lent GPU machine gets the tree without it)
        commit = "unknown"
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), "unknown CPU")
    return (f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, commit {commit}, {cpu}, "
            f"torch {torch.__version__}, torchvision {torchvision.__version__}: `{command}`")


def write_results(path, table, header):
    block = f"{BEGIN}\n{header}\n\n{table}\n{END}"
    text = open(path).read()
    if BEGIN in text:
        text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, text,
                      flags=re.S)
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def check_model(family, name, seed, opsets, out_dir, mxlite, device, keep):
    """One row: (parameters in millions, cells, passed, checked). Runs in a child process."""
    model = build(family, name, seed)
    weight_bytes = 4 * sum(p.numel() for p in model.parameters())
    if weight_bytes > MAX_WEIGHT_BYTES:
        return weight_bytes / 4e6, [f"skipped: {weight_bytes / 1e9:.1f} GB of weights"] * len(
            opsets), 0, 0
    torch.manual_seed(seed + 1000)
    x = torch.empty(input_shape(family, name)).uniform_(-1, 1)
    with torch.no_grad():
        expected = model(x).numpy()
    tensor_pb.write(os.path.join(out_dir, "input.pb"), x.numpy(), "input")
    cells, passed = [], 0
    for opset in opsets:
        cell, ok = check(model, x, expected, opset, out_dir, mxlite, device, keep)
        cells.append(cell)
        passed += ok
    return weight_bytes / 4e6, cells, passed, len(opsets)


def child(args):
    """--child FAMILY NAME SEED: check one model and print its row as JSON."""
    # The soft limit only, so that mxlite's own process can lift it (unlimited_address_space).
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY_BYTES, hard))
    family, name, seed = args.child[0], args.child[1], int(args.child[2])
    row = check_model(family, name, seed, args.opsets, args.out_dir, os.path.abspath(args.mxlite),
                      args.device, args.keep)
    print("ROW " + json.dumps(row), flush=True)


def run_child(family, name, seed, args):
    model_dir = os.path.join(args.out_dir, name)
    os.makedirs(model_dir, exist_ok=True)
    command = [sys.executable, os.path.abspath(__file__), model_dir, "--child", family, name,
               str(seed), "--mxlite", args.mxlite, "--device", args.device,
               "--opsets", *map(str, args.opsets)]
    if args.keep:
        command.append("--keep")
    env = dict(os.environ)
    if args.jobs > 1:  # the machine's cores shared between the models checked at once
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // args.jobs))
    try:
        result = subprocess.run(command, capture_output=True, text=True, env=env,
                                timeout=CHILD_SECONDS)
    except subprocess.TimeoutExpired:
        return 0.0, [f"stopped: over {CHILD_SECONDS} s"] * len(args.opsets), 0, len(args.opsets)
    for line in result.stdout.splitlines():
        if line.startswith("ROW "):
            return json.loads(line[4:])
    why = "killed (out of memory?)" if result.returncode < 0 else first_line(result.stderr)
    return 0.0, [f"stopped: {why}"] * len(args.opsets), 0, len(args.opsets)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--opsets", nargs="+", type=int, default=[13, 17])
    parser.add_argument("--families", nargs="+", choices=list(FAMILIES), default=list(FAMILIES))
    parser.add_argument("--models", nargs="+", help="only these builders")
    parser.add_argument("--mxlite", default="build/bin/mxlite")
    parser.add_argument("--results", help="write the table into this file's onnx-zoo section "
                        "(the whole zoo only: not with --models or --families)")
    parser.add_argument("--device", choices=["cpu", "gpu"], default="cpu",
                        help="where mxlite runs the models (PyTorch's reference is on the CPU)")
    parser.add_argument("--jobs", type=int, default=1, help="models checked at once")
    parser.add_argument("--keep", action="store_true", help="keep the exported ONNX files")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    if args.child:
        return child(args)
    if args.results and (args.models or set(args.families) != set(FAMILIES)):
        parser.error("--results writes the whole zoo's table; drop --models / --families")

    run_info = run_header("bench/onnx_zoo.py " + " ".join(sys.argv[1:]))
    # Each model's seed is its index in the whole zoo, whichever models are checked.
    chosen = [(seed, family, name) for seed, (family, name) in enumerate(builders(args.families))
              if not args.models or name in args.models]

    def timed_row(seed, family, name):
        started = time.time()
        return run_child(family, name, seed, args), time.time() - started

    rows, passed, total = [], 0, 0
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futures = [pool.submit(timed_row, *model) for model in chosen]
        for (_, family, name), future in zip(chosen, futures):
            (parameters, cells, row_passed, row_checked), seconds = future.result()
            passed += row_passed
            total += row_checked
            row = f"| {name} | {family} | {parameters:.1f} | " + " | ".join(cells) + " |"
            rows.append(row)
            print(row, f"({seconds:.0f} s)", flush=True)

    columns = ("| model | family | parameters (M) | "
              + " | ".join(f"opset {o}" for o in args.opsets) + " |\n"
              + "| --- | --- | ---: | " + " | ".join("---" for _ in args.opsets) + " |")
    summary = f"{passed} of {total} model exports within {LIMIT:g} of PyTorch"
    table = columns + "\n" + "\n".join(rows) + "\n\n" + summary + "."
    print(summary)
    if args.results:
        write_results(args.results, table, run_info)
    sys.exit(0 if passed == total else 1)


if __name__ == "__main__":
    main()
