"""ONNX import (scheduler/onnx/onnx_import.h):

    model = mxlite.load_onnx("model.onnx", input_shapes={"input": (8, 3, 224, 224)})
    outputs = model.run({"input": images})            # by ONNX input name; NumPy in and out
    executor = model.bind("cpu")                       # or drive an Executor yourself

The file is untrusted: malformed models raise MXLiteError naming the file and the node.
"""

import ctypes

from ._library import MXLiteError, c_shape_triple, c_str, call, list_names, names_from
from .executor import Executor
from .graph import Graph
from .ndarray import NDArray


class OnnxModel:
    def __init__(self, handle, path):
        self._handle = handle
        self.path = path
        self._executors = {}

    def __del__(self):
        if getattr(self, "_handle", None) is not None and self._handle.value:
            try:
                call.MXOnnxModelFree(self._handle)
            except Exception:
                pass
            self._handle = None

    @property
    def graph(self):
        handle = ctypes.c_void_p()
        call.MXOnnxModelGraph(self._handle, ctypes.byref(handle))
        return Graph(handle)

    @property
    def inputs(self):
        """{ONNX input name: graph variable name} of the model's (non-initialiser) inputs."""
        count = ctypes.c_uint32()
        onnx_names, variables = ctypes.POINTER(ctypes.c_char_p)(), ctypes.POINTER(ctypes.c_char_p)()
        call.MXOnnxModelListInputs(self._handle, ctypes.byref(count), ctypes.byref(onnx_names),
                                   ctypes.byref(variables))
        return dict(zip(names_from(count, onnx_names), names_from(count, variables)))

    @property
    def output_names(self):
        return list_names("MXOnnxModelListOutputs", self._handle)

    @property
    def parameter_names(self):
        return list_names("MXOnnxModelListParameters", self._handle)

    def parameter(self, name, context="cpu"):
        """A parameter's value as a new NDArray."""
        handle = ctypes.c_void_p()
        call.MXOnnxModelGetParameter(self._handle, c_str(name), c_str(context),
                                     ctypes.byref(handle))
        return NDArray(handle, name)

    def bind(self, context="cpu", training=False):
        """An Executor over the model with its parameters loaded."""
        arrays = {name: self.parameter(name, context) for name in self.parameter_names}
        return Executor.bind(self.graph, context, training, arrays)

    def run(self, inputs, context="cpu"):
        """Runs inference on {ONNX input name: NumPy array}; returns the outputs in model order.
        The executor is bound on the first call per context and reused."""
        if context not in self._executors:
            self._executors[context] = self.bind(context)
        executor = self._executors[context]
        variables = self.inputs
        unknown = sorted(set(inputs) - set(variables))
        if unknown:
            raise MXLiteError("%s has no input %s; its inputs are %s"
                              % (self.path, ", ".join(unknown), ", ".join(sorted(variables))))
        return executor.forward({variables[name]: value for name, value in inputs.items()})


def load_onnx(path, input_shapes=None):
    """Imports an ONNX model file; `input_shapes` fixes dynamic input dims ({name: shape})."""
    num_shapes, names, ndims, dims = c_shape_triple(input_shapes)
    handle = ctypes.c_void_p()
    call.MXOnnxLoad(c_str(str(path)), num_shapes, names, ndims, dims, ctypes.byref(handle))
    return OnnxModel(handle, str(path))
