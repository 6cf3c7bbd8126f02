"""A small network's forward and backward through the stub, against the same math in NumPy:
fc(3) -> relu -> fc(2) -> tanh with given head gradients, and fc -> SoftmaxOutput."""

import math

import numpy as np
import pytest

BATCH, FEATURES, HIDDEN, CLASSES = 5, 4, 3, 2


def build_mlp(mxlite, dtype, head):
    g = mxlite.GraphBuilder()
    x = g.input("data", (BATCH, FEATURES), dtype=dtype)
    h = g.relu(g.fully_connected(x, num_hidden=HIDDEN))
    z = g.fully_connected(h, num_hidden=CLASSES)
    if head == "tanh":
        return g.build([g.tanh(z)])
    return g.build([g.softmax_output(z, g.input("softmax_label", (BATCH,), dtype=dtype))])


def random_parameters(rng, dtype):
    return {"fc0_weight": rng.standard_normal((HIDDEN, FEATURES)).astype(dtype),
            "fc0_bias": rng.standard_normal(HIDDEN).astype(dtype),
            "fc1_weight": rng.standard_normal((CLASSES, HIDDEN)).astype(dtype),
            "fc1_bias": rng.standard_normal(CLASSES).astype(dtype)}


def reference_forward(x, p):
    h = x @ p["fc0_weight"].T + p["fc0_bias"]
    r = np.maximum(h, 0)
    z = r @ p["fc1_weight"].T + p["fc1_bias"]
    return h, r, z


def reference_backward(x, p, h, r, dz):
    dr = dz @ p["fc1_weight"]
    dh = dr * (h > 0)
    return {"fc1_weight": dz.T @ r, "fc1_bias": dz.sum(0), "fc0_weight": dh.T @ x,
            "fc0_bias": dh.sum(0), "data": dh @ p["fc0_weight"]}


TOLERANCE = {"float64": 1e-12, "float32": 1e-5}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_forward_and_backward_with_head_gradients(mxlite, dtype):
    rng = np.random.default_rng(3)
    params = random_parameters(rng, dtype)
    x = rng.standard_normal((BATCH, FEATURES)).astype(dtype)
    head = rng.standard_normal((BATCH, CLASSES)).astype(dtype)

    executor = build_mlp(mxlite, dtype, "tanh").bind("cpu", training=True, arrays=params,
                                                      input_gradients=["data"])
    (out,) = executor.forward(is_train=True, data=x)
    executor.backward([head])

    params64 = {name: value.astype(np.float64) for name, value in params.items()}
    h, r, z = reference_forward(x.astype(np.float64), params64)
    expected_out = np.tanh(z)
    np.testing.assert_allclose(out, expected_out, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])
    expected = reference_backward(x, params, h, r, head * (1 - expected_out ** 2))
    for name, gradient in expected.items():
        np.testing.assert_allclose(executor.gradient(name).asnumpy(), gradient,
                                   rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype], err_msg=name)


def test_softmax_output_gradient_is_probabilities_minus_labels(mxlite):
    rng = np.random.default_rng(4)
    params = random_parameters(rng, np.float64)
    x = rng.standard_normal((BATCH, FEATURES))
    labels = np.array([0, 1, 1, 0, 1], dtype=np.float64)

    executor = build_mlp(mxlite, "float64", "softmax").bind("cpu", training=True, arrays=params)
    assert executor.parameter_names == ["fc0_weight", "fc0_bias", "fc1_weight", "fc1_bias"]
    (probabilities,) = executor.forward(is_train=True, data=x, softmax_label=labels)
    executor.backward()

    h, r, z = reference_forward(x, params)
    expected = np.exp(z - z.max(1, keepdims=True))
    expected /= expected.sum(1, keepdims=True)
    np.testing.assert_allclose(probabilities, expected, rtol=1e-12)
    grads = reference_backward(x, params, h, r, expected - np.eye(CLASSES)[labels.astype(int)])
    for name in executor.parameter_names:
        np.testing.assert_allclose(executor.gradient(name).asnumpy(), grads[name], rtol=1e-10,
                                   atol=1e-12, err_msg=name)


def test_arrays_given_at_bind_are_shared_and_outputs_are_live(mxlite):
    weight = mxlite.array(np.ones((CLASSES, FEATURES), dtype=np.float32))
    g = mxlite.GraphBuilder()
    y = g.fully_connected(g.input("data", (1, FEATURES)), num_hidden=CLASSES, no_bias=True)
    executor = g.build([y]).bind(arrays={"fc0_weight": weight})
    x = np.arange(FEATURES, dtype=np.float32)[None]
    np.testing.assert_array_equal(executor.forward(data=x)[0], [[6, 6]])
    weight.copy_from(np.full((CLASSES, FEATURES), 2, dtype=np.float32))  # the executor sees it
    executor.forward(data=x)
    np.testing.assert_array_equal(executor.output_arrays()[0].asnumpy(), [[12, 12]])
    np.testing.assert_array_equal(executor.arg("fc0_weight").asnumpy(), weight.asnumpy())


def test_generic_ops_multiple_outputs_and_summary(mxlite):
    g = mxlite.GraphBuilder()
    a, b = g.input("a", (2, 3)), g.input("b", (1, 3))
    total = g.op("broadcast_add", [a, b], name="total")
    assert total.name == "total" and len(g.outputs(total)) == 1
    executor = g.build([total, g.op("elemwise_mul", [a, a])]).bind()
    outs = executor.forward(a=np.ones((2, 3), np.float32), b=np.arange(3, dtype=np.float32)[None])
    np.testing.assert_array_equal(outs[0], [[1, 2, 3], [1, 2, 3]])
    np.testing.assert_array_equal(outs[1], np.ones((2, 3)))
    assert "total" in executor.summary()


def test_slice_and_element_wise_math_by_name(mxlite):
    """Ops without a helper of their own are reached by name: NumPy's slicing and functions."""
    g = mxlite.GraphBuilder()
    x = g.input("x", (4, 6))
    window = g.op("slice", [x], begin=(3, 1), end=(-9223372036854775808, 6), step=(-2, 2))
    gelu_part = g.op("erf", [g.op("sqrt", [x])])
    gate = g.op("hard_sigmoid", [x], alpha=0.25, beta=0.5)
    executor = g.build([window, gelu_part, gate]).bind()
    data = np.arange(1, 25, dtype=np.float32).reshape(4, 6) / 8
    outs = executor.forward(x=data)
    np.testing.assert_array_equal(outs[0], data[3::-2, 1:6:2])
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(outs[1], erf(np.sqrt(data.astype(np.float64))), rtol=1e-6)
    np.testing.assert_allclose(outs[2], np.clip(0.25 * data + 0.5, 0, 1), rtol=1e-6)


def test_the_layers_of_modern_convnets_have_shorthands(mxlite):
    """A MobileNet-V3 gate, a U-Net's upsampling and crop, reductions: against NumPy."""
    g = mxlite.GraphBuilder()
    x = g.input("x", (2, 3, 4, 4))
    gate = g.hard_sigmoid(g.mean(x, axis=(2, 3), keepdims=True))
    gated = g.multiply(x, gate)
    up = g.resize(x, size=(8, 8), mode="nearest")
    crop = g.slice(x, begin=(0, 0, 1, 1), end=(2, 3, 3, 3))
    high = g.reshape(g.maximum(x, g.sum(x, axis=(1,), keepdims=True)), (2, -1))
    low = g.minimum(x, g.mean(x, axis=(1,), keepdims=True))
    executor = g.build([gated, up, crop, high, low]).bind()
    data = np.random.default_rng(3).uniform(-2, 2, (2, 3, 4, 4)).astype(np.float32)
    outs = executor.forward(x=data)
    mean = data.mean(axis=(2, 3), keepdims=True)
    np.testing.assert_allclose(outs[0], data * np.clip(mean / 6 + 0.5, 0, 1), rtol=1e-6)
    np.testing.assert_array_equal(outs[1], data.repeat(2, axis=2).repeat(2, axis=3))
    np.testing.assert_array_equal(outs[2], data[:, :, 1:3, 1:3])
    np.testing.assert_allclose(
        outs[3], np.maximum(data, data.sum(axis=1, keepdims=True)).reshape(2, -1), rtol=1e-6)
    np.testing.assert_allclose(outs[4], np.minimum(data, data.mean(axis=1, keepdims=True)),
                               rtol=1e-6)


def test_binding_with_another_batch_size(mxlite):
    rng = np.random.default_rng(5)
    params = random_parameters(rng, np.float64)
    x = rng.standard_normal((2, FEATURES))
    executor = build_mlp(mxlite, "float64", "tanh").bind(arrays=params,
                                                         input_shapes={"data": (2, FEATURES)})
    (out,) = executor.forward(data=x)
    np.testing.assert_allclose(out, np.tanh(reference_forward(x, params)[2]), rtol=1e-12)


@pytest.fixture
def tuning_db_off(mxlite):
    mxlite.settings["MXNET_TUNING_DB_MODE"] = "off"  # the test leaves no tuning DB behind
    yield
    del mxlite.settings["MXNET_TUNING_DB_MODE"]


def test_tuning_report_says_what_each_convolution_got_and_why(mxlite, tuning_db_off):
    g = mxlite.GraphBuilder()
    x = g.input("data", (1, 2, 8, 8))
    x = g.conv(x, num_filter=4, kernel=(3, 3), pad=(1, 1), cudnn_tune="off", name="heuristic_conv")
    x = g.conv(x, num_filter=4, kernel=(1, 1), cudnn_tune="fastest", name="timed_conv")
    executor = g.build([x]).bind()
    report = executor.tuning_report()
    lines = report.splitlines()
    assert any("heuristic_conv" in line and "attribute" in line for line in lines), report
    assert any("timed_conv" in line and "attribute" in line for line in lines), report
    assert lines[-1].startswith("tuned 2 convolutions: 0 from DB, 1 by heuristic (off"), report
    assert "1 benchmarked in " in lines[-1], report
    assert len(executor.tuning_report(verbose=True).splitlines()) > len(lines)
