"""ONNX import through the stub: models from the ONNX backend node tests (Debian libonnx-testdata)
run on their test inputs and match the expected outputs; bad files raise MXLiteError."""

import glob
import os

import numpy as np
import pytest

NODE_TESTS = "/usr/share/libonnx-testdata/data/node"
# A few of the node tests mxlite passes (tests/scheduler/onnx_pass_list.txt), one per kind of op.
CASES = ["test_basic_conv_with_padding", "test_gemm_all_attributes", "test_relu",
         "test_maxpool_2d_pads", "test_softmax_axis_1", "test_add_bcast"]


@pytest.fixture(scope="module")
def onnx_enabled(mxlite):
    if not mxlite.build_info()["onnx_enabled"]:
        pytest.skip("this libmxlite was built without ONNX import (libonnx-dev missing)")
    if not os.path.isdir(NODE_TESTS):
        pytest.skip("the ONNX node tests are not installed (Debian package libonnx-testdata)")


@pytest.mark.parametrize("case", CASES)
def test_node_test_runs_and_matches(mxlite, onnx_enabled, case):
    folder = os.path.join(NODE_TESTS, case)
    model = mxlite.load_onnx(os.path.join(folder, "model.onnx"))
    data_set = os.path.join(folder, "test_data_set_0")
    inputs = {}
    for path in sorted(glob.glob(os.path.join(data_set, "input_*.pb"))):
        name, array = mxlite.load_tensor_proto(path)
        inputs[name] = array.asnumpy()
    assert set(inputs) == set(model.inputs)
    outputs = model.run(inputs)
    expected = [mxlite.load_tensor_proto(os.path.join(data_set, "output_%d.pb" % i))[1].asnumpy()
                for i in range(len(model.output_names))]
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert model.run(inputs)[0].shape == expected[0].shape  # the bound executor is reused


def test_parameters_are_exposed(mxlite, onnx_enabled):
    folder = os.path.join(NODE_TESTS, "test_constant")  # its Constant node becomes a parameter
    model = mxlite.load_onnx(os.path.join(folder, "model.onnx"))
    assert model.parameter_names == ["values"]
    executor = model.bind()
    value = model.parameter("values").asnumpy()
    np.testing.assert_array_equal(executor.arg("values").asnumpy(), value)
    expected = mxlite.load_tensor_proto(os.path.join(folder, "test_data_set_0", "output_0.pb"))[1]
    np.testing.assert_array_equal(value, expected.asnumpy())


def test_malformed_model_names_the_file(mxlite, onnx_enabled, tmp_path):
    path = tmp_path / "broken.onnx"
    path.write_bytes(b"\x08\x07\x12\xff\xff this is not a protobuf")
    with pytest.raises(mxlite.MXLiteError, match="broken.onnx"):
        mxlite.load_onnx(path)
    with pytest.raises(mxlite.MXLiteError, match="missing.onnx"):
        mxlite.load_onnx(tmp_path / "missing.onnx")


def test_unknown_input_name_is_refused(mxlite, onnx_enabled):
    model = mxlite.load_onnx(os.path.join(NODE_TESTS, "test_relu", "model.onnx"))
    with pytest.raises(mxlite.MXLiteError, match="has no input y; its inputs are x"):
        model.run({"y": np.zeros((3, 4, 5), np.float32)})


def test_input_shapes_replace_the_declared_ones(mxlite, onnx_enabled):
    model = mxlite.load_onnx(os.path.join(NODE_TESTS, "test_relu", "model.onnx"),
                             input_shapes={"x": (2, 5)})
    x = np.linspace(-1, 1, 10, dtype=np.float32).reshape(2, 5)
    (y,) = model.run({"x": x})
    np.testing.assert_array_equal(y, np.maximum(x, 0))
