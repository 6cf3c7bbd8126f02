#!/usr/bin/env bash
# Copies a few small ONNX models from libonnx-testdata into a seed corpus folder for
# onnx_import_fuzzer (usage: tests/fuzz/seed_corpus.sh DIR). The seeds cover the ops mxlite imports,
# initialisers, shape folding chains and the importer's rejections.
set -euo pipefail
corpus=${1:?usage: seed_corpus.sh DIR}
node=/usr/share/libonnx-testdata/data/node
mkdir -p "$corpus"
for test in test_conv_with_strides_padding test_convtranspose test_gemm_default_matrix_bias \
            test_maxpool_2d_pads test_averagepool_2d_ceil test_batchnorm_example test_relu \
            test_reshape_reordered_all_dims test_flatten_axis1 test_concat_3d_axis_1 test_add_bcast \
            test_softmax_axis_1 test_clip_default_min test_constant_pad test_transpose_default \
            test_unsqueeze_axis_0 test_squeeze test_matmul_2d test_leakyrelu test_identity \
            test_shape test_gather_0 test_constant test_dropout_default test_abs; do
  if [ -f "$node/$test/model.onnx" ]; then
    cp "$node/$test/model.onnx" "$corpus/$test.onnx"
  fi
done
echo "[mxlite] seed corpus: $(ls "$corpus" | wc -l) models in $corpus"
