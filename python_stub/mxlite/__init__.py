"""mxlite: a small deep-learning engine, driven from Python through its C API (ctypes).

    import mxlite
    g = mxlite.GraphBuilder()
    ...
    executor = g.build([loss]).bind("cpu", training=True)

The shared library is found from MXNET_LIBRARY_PATH (the file or its folder), then next to this
package, then the build folder of the source tree (see mxlite._library). Errors from the library
raise MXLiteError carrying mxlite's own message.
"""

import ctypes
import json

from . import profiler
from ._library import LibraryNotFoundError, MXLiteError, call, library_path, py_str
from .executor import Executor
from .graph import Graph, GraphBuilder, Symbol
from .ndarray import DTYPES, NDArray, array, load_tensor_proto, zeros
from .onnx import OnnxModel, load_onnx
from .optimizer import SGD, Adam, Optimizer
from .settings import Settings, UnknownSettingError, settings


def _version():
    out = ctypes.c_char_p()
    call.MXGetVersion(ctypes.byref(out))
    return py_str(out.value)


__version__ = _version()


def build_info():
    """The build and the machine: version, compiler, CUDA, GPUs, CPU features, GEMM, ONNX."""
    out = ctypes.c_char_p()
    call.MXGetBuildInfo(ctypes.byref(out))
    return json.loads(py_str(out.value))


def wait_all():
    """Blocks until every pushed op has run; raises the first error not yet reported."""
    call.MXEngineWaitAll()


__all__ = [
    "Adam", "DTYPES", "Executor", "Graph", "GraphBuilder", "LibraryNotFoundError", "MXLiteError",
    "NDArray", "OnnxModel", "Optimizer", "SGD", "Settings", "Symbol", "UnknownSettingError",
    "array", "build_info", "library_path", "load_onnx", "load_tensor_proto", "profiler",
    "settings", "wait_all", "zeros",
]
