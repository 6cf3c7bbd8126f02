#!/usr/bin/env bash
# mxlite beside ONNX Runtime, OpenVINO and ncnn on every torchvision model of the ONNX benchmark
# set (bench/onnx_models.py), batch 1 and 8, 1 and 2 threads, runtimes alternating in 3 rounds
# (bench/onnx_compare.py gives the method); one table with mxlite / the faster peer per row, and the
# closing line `CPU zoo geomean mxlite / faster peer: X over N rows; worst: ...`.
#
#   bench/zoo_compare.sh                                   # the whole table, into bench/RESULTS.md
#   bench/zoo_compare.sh --models resnet18 --batches 1     # a part of it, printed only
#
# With no arguments the table replaces the zoo-compare section of bench/RESULTS.md (header: date,
# commit, machine, versions, the command); arguments go to onnx_compare.py, and the table is then
# only printed unless they include `--results bench/RESULTS.md`, e.g. for a shorter run:
#   bench/zoo_compare.sh --batches 1 --rounds 2 --images 20 --results bench/RESULTS.md
# Needs build/bin/mxlite (MXLITE_BUILD_DIR overrides build). Installs what is missing: Debian's
# python3-torch and python3-torchvision, and from PyPI into build/onnx-bench/venv onnxruntime,
# openvino, ncnn and pnnx (which converts the networks for ncnn: bench/ncnn_models.py). Takes hours
# on two cores for the whole table; a machine with more cores than threads asked keeps the rest
# idle.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/onnx_env.sh
mxlite_bench_python_deps

mxlite_bench_binary
out=$(realpath -m "$build_dir/onnx-bench")
python=$(mxlite_bench_venv "$out/venv" openvino ncnn pnnx)
models=$(cd bench && /usr/bin/python3 -c 'import onnx_models; print(*onnx_models.MODELS)')
missing=$(cd bench && "$python" -c "
import json, os, sys
meta = json.load(open('$out/models.json')) if os.path.exists('$out/models.json') else {}
print(*[m for m in sys.argv[1:] if m not in meta])" $models)
[ -z "$missing" ] || (cd bench && /usr/bin/python3 onnx_models.py "$out" $missing)
(cd bench && "$python" ncnn_models.py "$out" $models)

results=()
[ $# -eq 0 ] && results=(--results bench/RESULTS.md)
versions=$("$python" -c 'import onnxruntime, openvino, ncnn; print("onnxruntime " + onnxruntime.__version__ + ", openvino " + openvino.__version__.split("-")[0] + ", ncnn " + ncnn.__version__)')
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
export MXLITE_ZOO_HEADER="$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD), $(nproc) cores ($cpu), $versions: \`bench/zoo_compare.sh${*:+ $*}\`"
echo "# $MXLITE_ZOO_HEADER, load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$python" bench/onnx_compare.py --models-dir "$out" --mxlite "$mxlite" --ncnn-dir "$out/ncnn" \
  --models $models --batches 1 8 --threads 1 2 --runtimes mxlite onnxruntime openvino ncnn \
  "${results[@]}" "$@"
echo "# done $(date -u '+%H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
