"""Executor: a graph bound to a device (scheduler/graph/executor.h), driven with NumPy arrays.

    executor = graph.bind("cpu", training=True)
    executor.initialize("xavier", seed=1)
    outputs = executor.forward(is_train=True, data=images, softmax_label=labels)  # NumPy copies
    executor.backward()
    grad = executor.gradient("fc0_weight").asnumpy()

Inputs given to forward() are copied into the executor's arrays (dtype and shape checked, never
converted); outputs come back as NumPy copies. arg(), gradient() and output_arrays() give live
NDArray handles that share the executor's memory.
"""

import ctypes

from ._library import (MXLiteError, c_handle_array, c_shape_triple, c_str, c_str_array, call,
                       list_names, py_str)
from .ndarray import NDArray, array


class Executor:
    def __init__(self, handle, context):
        self._handle = handle
        self.context = context

    @classmethod
    def bind(cls, graph, context="cpu", training=False, arrays=None, input_gradients=(),
             input_shapes=None, seed=0):
        """Binds `graph` to `context` ("cpu", "gpu(0)"). With training, backward is planned for
        every parameter and the inputs named in `input_gradients`. `arrays` maps variable names
        (or "<parameter>_grad") to NDArrays to share or NumPy arrays to copy; the rest start as
        zeros. `input_shapes` replaces declared input shapes (another batch size)."""
        arrays = {name: value if isinstance(value, NDArray) else array(value, context=context)
                  for name, value in (arrays or {}).items()}
        names = list(arrays)
        handles = c_handle_array([arrays[n].handle for n in names])
        gradients = list(input_gradients)
        num_shapes, shape_names, shape_ndims, shape_dims = c_shape_triple(input_shapes)
        handle = ctypes.c_void_p()
        call.MXExecutorBind(graph._handle, c_str(context), int(bool(training)), len(names),
                            c_str_array(names), handles, len(gradients), c_str_array(gradients),
                            num_shapes, shape_names, shape_ndims, shape_dims, int(seed),
                            ctypes.byref(handle))
        return cls(handle, context)

    def __del__(self):
        if getattr(self, "_handle", None) is not None and self._handle.value:
            try:
                call.MXExecutorFree(self._handle)
            except Exception:
                pass
            self._handle = None

    # ---- Variables and results ------------------------------------------------------------------

    def arg(self, name):
        """The live array of a variable (input, parameter or auxiliary state)."""
        handle = ctypes.c_void_p()
        call.MXExecutorGetArg(self._handle, c_str(name), ctypes.byref(handle))
        return NDArray(handle, name)

    def gradient(self, name):
        """The live gradient array of a parameter (or of an input bound in input_gradients)."""
        handle = ctypes.c_void_p()
        call.MXExecutorGetGradient(self._handle, c_str(name), ctypes.byref(handle))
        return NDArray(handle, name + "_grad")

    @property
    def num_outputs(self):
        count = ctypes.c_uint32()
        call.MXExecutorNumOutputs(self._handle, ctypes.byref(count))
        return count.value

    def output_arrays(self):
        """Live arrays of the graph's outputs."""
        arrays = []
        for index in range(self.num_outputs):
            handle = ctypes.c_void_p()
            call.MXExecutorGetOutput(self._handle, index, ctypes.byref(handle))
            arrays.append(NDArray(handle, "output %d" % index))
        return arrays

    @property
    def outputs(self):
        """NumPy copies of the outputs (waits for them; raises the error of an op that failed)."""
        return [output.asnumpy() for output in self.output_arrays()]

    @property
    def parameter_names(self):
        return list_names("MXExecutorListParameters", self._handle)

    @property
    def auxiliary_names(self):
        return list_names("MXExecutorListAuxiliary", self._handle)

    def set_inputs(self, inputs=None, **named):
        """Copies NumPy arrays into the variables they are named after."""
        for name, value in dict(inputs or {}, **named).items():
            self.arg(name).copy_from(value)

    # ---- Running ---------------------------------------------------------------------------------

    def initialize(self, initializer="xavier", value=None, seed=0):
        """Initialises parameters and auxiliary states by MXNet's name rules: weights from
        `initializer` ("xavier", "uniform", "normal", "constant", "zeros"; `value` is the magnitude,
        scale, sigma or constant), biases and betas 0, gammas 1, moving means 0, variances 1."""
        if initializer == "constant" and value is None:
            raise MXLiteError("the constant initializer needs a value")
        call.MXExecutorInitParameters(self._handle, c_str(initializer),
                                      -1.0 if value is None else float(value), int(seed))

    def forward(self, inputs=None, is_train=False, **named):
        """Copies the given inputs in (a dict, or keyword arguments by variable name), runs the
        forward pass and returns the outputs as NumPy arrays."""
        self.set_inputs(inputs, **named)
        call.MXExecutorForward(self._handle, int(bool(is_train)))
        return self.outputs

    def backward(self, head_gradients=None):
        """Runs the backward pass. `head_gradients`: one array per output (NumPy or NDArray), or
        None for ones (loss outputs such as SoftmaxOutput ignore them)."""
        heads = [g if isinstance(g, NDArray) else array(g, context=self.context)
                 for g in (head_gradients or [])]
        call.MXExecutorBackward(self._handle, len(heads), c_handle_array([h.handle for h in heads]))

    def tuning_report(self, verbose=False):
        """What the convolution tuner chose at bind, per layer and direction, and why; with
        `verbose` every candidate with its time and workspace."""
        out = ctypes.c_char_p()
        call.MXExecutorTuningReport(self._handle, int(bool(verbose)), ctypes.byref(out))
        return py_str(out.value)

    def summary(self):
        """Layers, output shapes, parameter counts and the memory plan."""
        out = ctypes.c_char_p()
        call.MXExecutorSummary(self._handle, ctypes.byref(out))
        return py_str(out.value)
