"""Errors raised in C++ reach Python as MXLiteError carrying mxlite's own message."""

import ctypes
import json

import numpy as np
import pytest


def last_c_error():
    from mxlite._library import _lib
    return _lib.MXGetLastError().decode()


def test_unknown_op_lists_the_known_ones(mxlite):
    g = mxlite.GraphBuilder()
    with pytest.raises(mxlite.MXLiteError) as error:
        g.op("Convolutio", [g.input("data", (1, 1, 4, 4))])
    message = str(error.value)
    assert message == last_c_error()  # the C side's message, unchanged
    assert "'Convolutio'" in message and "Convolution" in message


def test_bad_attributes_name_the_node(mxlite):
    g = mxlite.GraphBuilder()
    x = g.input("data", (1, 1, 4, 4))
    with pytest.raises(mxlite.MXLiteError, match="conv0") as error:
        g.conv(x, num_filter=2, kernel=(3, 3), layout="NCWH")
    assert "layout" in str(error.value)
    with pytest.raises(mxlite.MXLiteError, match="kernl"):
        g.op("Convolution", [x], num_filter=2, kernl=(3, 3))


def test_bad_shapes_name_the_node_and_both_shapes(mxlite):
    g = mxlite.GraphBuilder()
    total = g.add(g.input("a", (2, 3)), g.input("b", (4, 5)), name="total")
    graph = g.build([total])
    with pytest.raises(mxlite.MXLiteError) as error:
        graph.bind()
    message = str(error.value)
    assert "total" in message and "(2,3)" in message and "(4,5)" in message


def test_input_shape_that_breaks_a_parameter(mxlite):
    g = mxlite.GraphBuilder()
    y = g.fully_connected(g.input("data", (2, 3)), num_hidden=4)
    weight = mxlite.zeros((4, 5))
    with pytest.raises(mxlite.MXLiteError, match="fc0_weight"):
        g.build([y]).bind(arrays={"fc0_weight": weight})


def test_executor_errors(mxlite):
    g = mxlite.GraphBuilder()
    executor = g.build([g.relu(g.input("data", (2, 2)))]).bind()
    with pytest.raises(mxlite.MXLiteError, match="the graph has no variable 'label'"):
        executor.arg("label")
    with pytest.raises(mxlite.MXLiteError, match="no gradient for 'data'"):
        executor.gradient("data")
    with pytest.raises(mxlite.MXLiteError, match="unknown initializer 'he'; known: xavier"):
        executor.initialize("he")
    with pytest.raises(mxlite.MXLiteError, match="tpu"):
        g.build([g.relu(g.input("x", (1,)))]).bind("tpu(0)")


def test_optimizer_options_are_checked(mxlite):
    with pytest.raises(mxlite.MXLiteError, match="unknown optimizer 'rmsprop'; known: sgd, adam"):
        mxlite.Optimizer("rmsprop")
    with pytest.raises(mxlite.MXLiteError, match="unknown option 'momentun' for optimizer sgd"):
        mxlite.Optimizer("sgd", momentun=0.9)


def test_errors_inside_engine_ops_surface_when_results_are_read(mxlite):
    g = mxlite.GraphBuilder()
    logits = g.fully_connected(g.input("data", (2, 3)), num_hidden=3)
    graph = g.build([g.softmax_output(logits, g.input("softmax_label", (2,)))])
    executor = graph.bind(training=True)
    executor.forward(is_train=True, data=np.zeros((2, 3), np.float32),
                     softmax_label=np.array([0, 7], np.float32))
    executor.backward()  # pushed; the bad label fails inside the engine
    with pytest.raises(mxlite.MXLiteError) as error:
        executor.gradient("fc0_weight").asnumpy()
    assert str(error.value).startswith("engine op 'backward softmax0' failed: ")
    assert "label 7 at position 1 is not a class index in [0, 3)" in str(error.value)
    executor.backward()
    with pytest.raises(mxlite.MXLiteError, match="label 7 at position 1"):
        mxlite.wait_all()
    mxlite.wait_all()  # an error is reported once


def test_the_library_stays_usable_after_an_error(mxlite):
    with pytest.raises(mxlite.MXLiteError):
        mxlite.GraphBuilder().op("NoSuchOp", [])
    np.testing.assert_array_equal(mxlite.array(np.ones(3, np.float32)).asnumpy(), np.ones(3))


def test_null_handles_are_errors_not_crashes(mxlite):
    from mxlite._library import call
    with pytest.raises(mxlite.MXLiteError, match="ExecutorHandle is NULL"):
        call.MXExecutorForward(None, 0)
    with pytest.raises(mxlite.MXLiteError, match="ndim 7 is outside 0..6"):
        call.MXNDArrayCreate((ctypes.c_int64 * 7)(*[1] * 7), 7, b"float32", b"cpu",
                             ctypes.byref(ctypes.c_void_p()))


def test_profiler_writes_a_chrome_trace(mxlite, tmp_path):
    g = mxlite.GraphBuilder()
    executor = g.build([g.relu(g.input("data", (2, 2)), name="my_relu")]).bind()
    mxlite.profiler.clear()
    mxlite.profiler.start(0)
    executor.forward(data=np.ones((2, 2), np.float32))
    mxlite.wait_all()
    mxlite.profiler.stop()
    path = tmp_path / "profile.json"
    mxlite.profiler.dump(path)
    trace = json.loads(path.read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    assert any(event.get("ph") == "X" and "my_relu" in event.get("name", "") for event in events)
    with pytest.raises(mxlite.MXLiteError, match="profiler mode 5"):
        mxlite.profiler.start(5)


def test_build_info_and_version(mxlite):
    info = mxlite.build_info()
    assert info["version"] == mxlite.__version__
    assert isinstance(info["cpu_features"], list) and info["hardware_threads"] >= 1
