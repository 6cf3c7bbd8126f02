"""Finding and loading libmxlite.so, the C API's signatures, and turning C errors into exceptions.

The library is looked for, in order:
  1. MXNET_LIBRARY_PATH: the library file itself, or a folder holding libmxlite.so;
  2. next to this package (python_stub/mxlite/libmxlite.so, or site-packages/mxlite/ when installed
     with a copy of the library);
  3. when the package sits in a source tree (python_stub/mxlite), that tree's build folder
     (<repository>/build/libmxlite.so).
A MXNET_LIBRARY_PATH that holds no library is warned about and skipped, as MXNet does. When no
place has it, LibraryNotFoundError lists every place and why it did not qualify.
"""

import ctypes
import os
import warnings

LIBRARY_NAME = "libmxlite.so"
MAX_DIMS = 6  # MX_MAX_DIMS in c_api.h


class MXLiteError(Exception):
    """An error reported by mxlite; from C, the message is MXGetLastError()'s, unchanged."""


class LibraryNotFoundError(MXLiteError, ImportError):
    """libmxlite.so was not found (or could not be loaded) in any of the places mxlite looks."""


def _candidates():
    """(path, how it was chosen) in lookup order; the environment's entry only when it is set."""
    package_dir = os.path.dirname(os.path.abspath(__file__))
    candidates = []
    from_env = os.environ.get("MXNET_LIBRARY_PATH", "")
    if from_env:
        path = os.path.join(from_env, LIBRARY_NAME) if os.path.isdir(from_env) else from_env
        candidates.append((path, "MXNET_LIBRARY_PATH=" + from_env))
    candidates.append((os.path.join(package_dir, LIBRARY_NAME), "next to the package"))
    stub_dir = os.path.dirname(package_dir)
    if os.path.basename(stub_dir) == "python_stub":  # in a source tree, not installed
        repository = os.path.dirname(stub_dir)
        candidates.append((os.path.join(repository, "build", LIBRARY_NAME), "the build folder"))
    return candidates


def find_library():
    """The path of the library to load, or LibraryNotFoundError naming every place looked at."""
    looked = []
    for path, how in _candidates():
        if os.path.isfile(path):
            return os.path.abspath(path)
        looked.append("  %s: %s (no such file)" % (how, path))
        if how.startswith("MXNET_LIBRARY_PATH"):
            warnings.warn("%s holds no %s (%s); looking elsewhere" % (how, LIBRARY_NAME, path))
    if not os.environ.get("MXNET_LIBRARY_PATH"):
        looked.insert(0, "  MXNET_LIBRARY_PATH: not set")
    raise LibraryNotFoundError(
        "cannot find %s; looked in:\n%s\nBuild it (cmake --build build --target mxlite_shared) or "
        "set MXNET_LIBRARY_PATH to the library or its folder." % (LIBRARY_NAME, "\n".join(looked)))


def _load():
    path = find_library()
    try:
        return ctypes.CDLL(path), path
    except OSError as error:
        raise LibraryNotFoundError("cannot load %s: %s" % (path, error)) from None


_lib, library_path = _load()

# ---- Signatures: every C API function with its argument types (return type int unless noted) ----

_c_int, _c_uint32, _c_int64, _c_uint64 = (ctypes.c_int, ctypes.c_uint32, ctypes.c_int64,
                                          ctypes.c_uint64)
_c_double, _c_size_t, _c_void_p, _c_char_p = (ctypes.c_double, ctypes.c_size_t, ctypes.c_void_p,
                                              ctypes.c_char_p)
_P = ctypes.POINTER
_strings = _P(_c_char_p)

_SIGNATURES = {
    "MXGetVersion": [_P(_c_char_p)],
    "MXGetBuildInfo": [_P(_c_char_p)],
    "MXSettingGet": [_c_char_p, _P(_c_char_p), _P(_c_char_p)],
    "MXSettingSet": [_c_char_p, _c_char_p],
    "MXSettingReset": [_c_char_p],
    "MXSettingList": [_P(_c_uint32), _P(_strings)],
    "MXSettingDescribe": [_c_char_p, _P(_c_char_p), _P(_c_char_p), _P(_c_char_p), _P(_c_char_p)],
    "MXNDArrayCreate": [_P(_c_int64), _c_int, _c_char_p, _c_char_p, _P(_c_void_p)],
    "MXNDArrayCreateFromCPU": [_P(_c_int64), _c_int, _c_char_p, _c_char_p, _c_void_p, _c_size_t,
                               _P(_c_void_p)],
    "MXNDArraySyncCopyFromCPU": [_c_void_p, _c_void_p, _c_size_t],
    "MXNDArraySyncCopyToCPU": [_c_void_p, _c_void_p, _c_size_t],
    "MXNDArrayGetShape": [_c_void_p, _P(_c_int), _P(_c_int64)],
    "MXNDArrayGetDType": [_c_void_p, _P(_c_char_p)],
    "MXNDArrayGetContext": [_c_void_p, _P(_c_char_p)],
    "MXNDArrayWaitToRead": [_c_void_p],
    "MXNDArrayLoadTensorProto": [_c_char_p, _P(_c_void_p), _P(_c_char_p)],
    "MXNDArrayFree": [_c_void_p],
    "MXGraphBuilderCreate": [_P(_c_void_p)],
    "MXGraphBuilderFree": [_c_void_p],
    "MXGraphBuilderInput": [_c_void_p, _c_char_p, _P(_c_int64), _c_int, _c_char_p, _P(_c_int)],
    "MXGraphBuilderParameter": [_c_void_p, _c_char_p, _P(_c_int64), _c_int, _P(_c_int)],
    "MXGraphBuilderOp": [_c_void_p, _c_char_p, _c_uint32, _P(_c_int), _c_uint32, _strings,
                         _strings, _c_char_p, _P(_c_int)],
    "MXGraphBuilderOutputs": [_c_void_p, _c_int, _c_uint32, _P(_c_uint32), _P(_c_int)],
    "MXGraphBuilderSymbolName": [_c_void_p, _c_int, _P(_c_char_p)],
    "MXGraphBuilderBuild": [_c_void_p, _c_uint32, _P(_c_int), _P(_c_void_p)],
    "MXGraphListVariables": [_c_void_p, _c_int, _P(_c_uint32), _P(_strings)],
    "MXGraphFree": [_c_void_p],
    "MXOnnxLoad": [_c_char_p, _c_uint32, _strings, _P(_c_int), _P(_c_int64), _P(_c_void_p)],
    "MXOnnxModelGraph": [_c_void_p, _P(_c_void_p)],
    "MXOnnxModelListParameters": [_c_void_p, _P(_c_uint32), _P(_strings)],
    "MXOnnxModelListInputs": [_c_void_p, _P(_c_uint32), _P(_strings), _P(_strings)],
    "MXOnnxModelListOutputs": [_c_void_p, _P(_c_uint32), _P(_strings)],
    "MXOnnxModelGetParameter": [_c_void_p, _c_char_p, _c_char_p, _P(_c_void_p)],
    "MXOnnxModelFree": [_c_void_p],
    "MXExecutorBind": [_c_void_p, _c_char_p, _c_int, _c_uint32, _strings, _P(_c_void_p),
                       _c_uint32, _strings, _c_uint32, _strings, _P(_c_int), _P(_c_int64),
                       _c_uint64, _P(_c_void_p)],
    "MXExecutorForward": [_c_void_p, _c_int],
    "MXExecutorBackward": [_c_void_p, _c_uint32, _P(_c_void_p)],
    "MXExecutorNumOutputs": [_c_void_p, _P(_c_uint32)],
    "MXExecutorGetOutput": [_c_void_p, _c_uint32, _P(_c_void_p)],
    "MXExecutorGetArg": [_c_void_p, _c_char_p, _P(_c_void_p)],
    "MXExecutorGetGradient": [_c_void_p, _c_char_p, _P(_c_void_p)],
    "MXExecutorListParameters": [_c_void_p, _P(_c_uint32), _P(_strings)],
    "MXExecutorListAuxiliary": [_c_void_p, _P(_c_uint32), _P(_strings)],
    "MXExecutorInitParameters": [_c_void_p, _c_char_p, _c_double, _c_uint64],
    "MXExecutorSummary": [_c_void_p, _P(_c_char_p)],
    "MXExecutorTuningReport": [_c_void_p, _c_int, _P(_c_char_p)],
    "MXExecutorFree": [_c_void_p],
    "MXOptimizerCreate": [_c_char_p, _c_uint32, _strings, _strings, _P(_c_void_p)],
    "MXOptimizerUpdateAll": [_c_void_p, _c_void_p],
    "MXOptimizerUpdate": [_c_void_p, _c_char_p, _c_void_p, _c_void_p],
    "MXOptimizerSetLearningRate": [_c_void_p, _c_double],
    "MXOptimizerGetLearningRate": [_c_void_p, _P(_c_double)],
    "MXOptimizerFree": [_c_void_p],
    "MXEngineWaitAll": [],
    "MXProfilerStart": [_c_int],
    "MXProfilerStop": [],
    "MXProfilerDump": [_c_char_p],
    "MXProfilerClear": [],
}


def _declare(lib):
    lib.MXGetLastError.argtypes = []
    lib.MXGetLastError.restype = _c_char_p
    for name, argtypes in _SIGNATURES.items():
        function = getattr(lib, name)
        function.argtypes = argtypes
        function.restype = _c_int


_declare(_lib)


class _CallC:
    """`call.MXFoo(args...)` calls the C function and raises MXLiteError with its message on -1."""

    def __getattr__(self, name):
        function = getattr(_lib, name)

        def checked(*args):
            if function(*args) != 0:
                raise MXLiteError(_lib.MXGetLastError().decode("utf-8", "replace"))

        return checked


call = _CallC()

# ---- Conversions between Python values and C arguments ----------------------------------------


def c_str(text):
    return text.encode("utf-8")


def py_str(raw):
    return raw.decode("utf-8", "replace") if raw is not None else ""


def c_str_array(texts):
    texts = [c_str(t) for t in texts]
    return (_c_char_p * len(texts))(*texts)


def c_dims(shape):
    shape = [int(d) for d in shape]
    return (_c_int64 * max(len(shape), 1))(*shape), len(shape)


def c_handle_array(handles):
    return (_c_void_p * len(handles))(*handles)


def c_shape_triple(shapes):
    """{name: shape} as the (count, names, ndims, flat dims) arguments of MXOnnxLoad and
    MXExecutorBind."""
    shapes = dict(shapes or {})
    names = list(shapes)
    ndims = [len(shapes[n]) for n in names]
    flat = [int(d) for n in names for d in shapes[n]]
    return (len(names), c_str_array(names), (_c_int * max(len(ndims), 1))(*ndims),
            (_c_int64 * max(len(flat), 1))(*flat))


def names_from(out_count, out_names):
    return [py_str(out_names[i]) for i in range(out_count.value)]


def list_names(function_name, *leading):
    """Calls a C function that returns (count, names) and gives the names as a list."""
    count, names = _c_uint32(), _strings()
    getattr(call, function_name)(*leading, ctypes.byref(count), ctypes.byref(names))
    return names_from(count, names)
