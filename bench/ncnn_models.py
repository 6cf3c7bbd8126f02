"""The ONNX benchmark models for ncnn: each network converted with pnnx, and checked against PyTorch.

    VENV_PYTHON ncnn_models.py OUT_DIR [MODEL...]     (run from bench/; a venv with pnnx and ncnn
                                                      over Debian's torch: bench/onnx_env.sh)

Builds each network as bench/onnx_models.py does (same seed, so the same weights), traces it with
pnnx at one 224x224 image (ncnn runs one image per extraction) and keeps OUT_DIR/ncnn/MODEL.ncnn.param
and .bin. Then runs the converted model in ncnn (fp32, as bench/onnx_peer.py runs it) on a fixed
image and compares with PyTorch's output: OUT_DIR/ncnn/models.json records, per model, "ok" (the
largest difference is within 1e-2 of the output's largest magnitude) or why not ("error": the
conversion failed, or the output differs). A model not ok is left out of the ncnn timings.
Models already converted are skipped.
"""
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import torch

import onnx_models

TOLERANCE = 1e-2  # of the largest output magnitude: fp32, reordered sums, Winograd F(6,3)


def ncnn_output(prefix, image):
    import ncnn
    net = ncnn.Net()
    net.opt.use_vulkan_compute = False
    for option in ("use_fp16_packed", "use_fp16_storage", "use_fp16_arithmetic",
                   "use_bf16_storage"):
        setattr(net.opt, option, False)
    net.load_param(prefix + ".ncnn.param")
    net.load_model(prefix + ".ncnn.bin")
    extractor = net.create_extractor()
    extractor.input("in0", ncnn.Mat(np.ascontiguousarray(image)))
    status, out = extractor.extract("out0")
    if status != 0:
        raise RuntimeError(f"ncnn extract returned {status}")
    return np.array(out)


def convert(name, out_dir):
    """Converts one model; returns its models.json entry."""
    import pnnx
    seed = list(onnx_models.MODELS).index(name)
    model = onnx_models.build(name, seed)
    image = torch.empty(1, 3, 224, 224).uniform_(-1, 1, generator=torch.Generator().manual_seed(7))
    prefix = os.path.join(out_dir, name)
    with tempfile.TemporaryDirectory() as work:
        try:
            # pnnx writes its files beside the traced module's path, and prints a lot.
            saved = [os.dup(1), os.dup(2)]
            quiet = os.open(os.path.join(work, "pnnx.log"), os.O_WRONLY | os.O_CREAT)
            os.dup2(quiet, 1)
            os.dup2(quiet, 2)
            try:
                pnnx.export(model, os.path.join(work, name + ".pt"), image)
            finally:
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
                for fd in saved + [quiet]:
                    os.close(fd)
        except Exception as error:  # pnnx raises whatever its trace or conversion hit
            # It also re-imports the Python module it generates, which fails where a layer's name
            # is not a Python identifier (RegNet): the ncnn files are written before that, and
            # are checked below like any other.
            failure = "pnnx: " + (str(error).splitlines() or [type(error).__name__])[0]
        else:
            failure = None
        for suffix in (".ncnn.param", ".ncnn.bin"):
            source = os.path.join(work, name + suffix)
            if not os.path.exists(source):
                return {"ok": False, "error": failure or f"pnnx wrote no {name}{suffix}"}
            shutil.move(source, prefix + suffix + ".tmp")
            os.replace(prefix + suffix + ".tmp", prefix + suffix)
    with torch.no_grad():
        expected = model(image)[0].numpy()
    try:
        got = ncnn_output(prefix, image[0].numpy())
    except RuntimeError as error:
        return {"ok": False, "error": f"ncnn could not run the conversion: {error}"}
    if got.size != expected.size:
        return {"ok": False, "error": f"output has {got.size} values, PyTorch {expected.size}"}
    difference = float(np.abs(got.reshape(-1) - expected.reshape(-1)).max())
    scale = float(np.abs(expected).max())
    ok = difference <= TOLERANCE * max(scale, 1e-6)
    entry = {"ok": ok, "max_difference": difference, "output_max": scale}
    if not ok:
        entry["error"] = f"output differs from PyTorch by {difference:.3g} (largest |output| {scale:.3g})"
    return entry


def main():
    if len(sys.argv) < 2 or any(name not in onnx_models.MODELS for name in sys.argv[2:]):
        sys.exit(__doc__)
    out_dir = os.path.join(sys.argv[1], "ncnn")
    os.makedirs(out_dir, exist_ok=True)
    meta_path = os.path.join(out_dir, "models.json")
    meta = json.load(open(meta_path)) if os.path.exists(meta_path) else {}
    for name in sys.argv[2:] or list(onnx_models.MODELS):
        if name in meta:
            continue
        meta[name] = convert(name, out_dir)
        print(f"ncnn {name}: " + ("ok" if meta[name]["ok"] else meta[name]["error"]), flush=True)
        with open(meta_path + ".tmp", "w") as f:
            json.dump(meta, f, indent=1)
        os.replace(meta_path + ".tmp", meta_path)


if __name__ == "__main__":
    main()
