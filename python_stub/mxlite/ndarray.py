"""NDArray: a handle to an mxlite array, with copies to and from NumPy (never shared memory).

Element types map to NumPy's one to one (float32, float64, float16, int32, int64, uint8), except
bfloat16, which NumPy lacks: a bfloat16 array reads out as float32 (exactly) and is written from
float32, rounded to the nearest bfloat16 (ties to even). Copies into an existing array check the
dtype and the shape and never convert silently: the error names the array and both dtypes.
"""

import ctypes

import numpy as np

from ._library import MAX_DIMS, MXLiteError, c_dims, c_str, call, py_str

_NUMPY_DTYPES = {
    "float32": np.dtype(np.float32),
    "float64": np.dtype(np.float64),
    "float16": np.dtype(np.float16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
}
DTYPES = tuple(_NUMPY_DTYPES) + ("bfloat16",)


def _host_dtype(dtype):
    """The NumPy dtype that values of an mxlite dtype are given and returned in."""
    return np.dtype(np.float32) if dtype == "bfloat16" else _NUMPY_DTYPES[dtype]


def _dtype_name(dtype):
    """An mxlite dtype name from a name, a NumPy dtype or a NumPy scalar type."""
    if isinstance(dtype, str) and dtype in DTYPES:
        return dtype
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = str(dtype)
    if name not in _NUMPY_DTYPES:
        raise MXLiteError("dtype %s is not supported by mxlite; supported: %s"
                          % (name, ", ".join(DTYPES)))
    return name


def _float32_to_bfloat16_bits(values):
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounding = ((bits >> 16) & 1) + np.uint32(0x7FFF)
    rounded = ((bits + rounding) >> 16).astype(np.uint16)
    # NaN must stay NaN: rounding may carry its payload into the exponent and make it infinity.
    return np.where(np.isnan(values), np.uint16(0x7FC0), rounded)


def _bfloat16_bits_to_float32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


class NDArray:
    """An mxlite array. Copies of the handle made by mxlite (an executor's argument, gradient or
    output) share that array's memory: writing them writes the executor's array."""

    def __init__(self, handle, name=None):
        self._handle = handle if isinstance(handle, ctypes.c_void_p) else ctypes.c_void_p(handle)
        self.name = name

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle is not None and handle.value:
            try:
                call.MXNDArrayFree(handle)
            except Exception:  # interpreter shutdown: the library may already be gone
                pass
            self._handle = None

    @property
    def handle(self):
        return self._handle

    @property
    def shape(self):
        ndim = ctypes.c_int()
        dims = (ctypes.c_int64 * MAX_DIMS)()
        call.MXNDArrayGetShape(self._handle, ctypes.byref(ndim), dims)
        return tuple(dims[i] for i in range(ndim.value))

    @property
    def dtype(self):
        """The mxlite dtype name ("float32", "bfloat16", ...)."""
        out = ctypes.c_char_p()
        call.MXNDArrayGetDType(self._handle, ctypes.byref(out))
        return py_str(out.value)

    @property
    def context(self):
        out = ctypes.c_char_p()
        call.MXNDArrayGetContext(self._handle, ctypes.byref(out))
        return py_str(out.value)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def _describe(self):
        label = "NDArray '%s'" % self.name if self.name else "NDArray"
        return "%s (%s %s)" % (label, self.dtype, _shape_text(self.shape))

    def wait_to_read(self):
        """Blocks until the ops writing this array are done; raises their error."""
        call.MXNDArrayWaitToRead(self._handle)

    def asnumpy(self):
        """A NumPy copy of the array (waits for the ops that write it; raises their errors)."""
        dtype = self.dtype
        if dtype == "bfloat16":
            bits = np.empty(self.shape, dtype=np.uint16)
            self._copy_to(bits)
            return _bfloat16_bits_to_float32(bits)
        out = np.empty(self.shape, dtype=_NUMPY_DTYPES[dtype])
        self._copy_to(out)
        return out

    def _copy_to(self, host):
        call.MXNDArraySyncCopyToCPU(self._handle, host.ctypes.data_as(ctypes.c_void_p), host.nbytes)

    def copy_from(self, source):
        """Copies a NumPy array (or anything np.asarray takes) of the same shape and dtype in."""
        dtype = self.dtype
        expected = _host_dtype(dtype)
        source = np.asarray(source)
        if source.dtype != expected:
            raise MXLiteError("cannot copy %s data into %s: expected %s (convert with "
                              ".astype(numpy.%s))" % (source.dtype.name, self._describe(),
                                                      expected.name, expected.name))
        if tuple(source.shape) != self.shape:
            raise MXLiteError("cannot copy data of shape %s into %s: the shapes differ"
                              % (_shape_text(source.shape), self._describe()))
        host = _host_bytes(source, dtype)
        call.MXNDArraySyncCopyFromCPU(self._handle, host.ctypes.data_as(ctypes.c_void_p),
                                      host.nbytes)
        return self

    def __repr__(self):
        return "<%s @%s>" % (self._describe(), self.context)


def _host_bytes(values, dtype):
    """`values` (already of the host dtype) as a contiguous buffer in the layout of `dtype`."""
    if dtype == "bfloat16":
        return _float32_to_bfloat16_bits(values)
    return np.ascontiguousarray(values)


def _shape_text(shape):
    return "(" + ",".join(str(int(d)) for d in shape) + ")"


def zeros(shape, dtype="float32", context="cpu"):
    """A new array of zeros."""
    dims, ndim = c_dims(shape)
    handle = ctypes.c_void_p()
    call.MXNDArrayCreate(dims, ndim, c_str(_dtype_name(dtype)), c_str(context),
                         ctypes.byref(handle))
    return NDArray(handle)


def array(source, dtype=None, context="cpu"):
    """A new array holding a copy of `source`. Without `dtype` the source's dtype is kept (it must
    be one mxlite supports); with one, the values are converted to it first, as NumPy's astype
    does."""
    source = np.asarray(source)
    name = _dtype_name(dtype if dtype is not None else source.dtype)
    host = _host_bytes(source.astype(_host_dtype(name), copy=False), name)
    dims, ndim = c_dims(source.shape)
    handle = ctypes.c_void_p()
    call.MXNDArrayCreateFromCPU(dims, ndim, c_str(name), c_str(context),
                                host.ctypes.data_as(ctypes.c_void_p), host.nbytes,
                                ctypes.byref(handle))
    return NDArray(handle)


def load_tensor_proto(path):
    """Reads an ONNX TensorProto file (the ONNX test-data format): (name, NDArray on the CPU)."""
    handle, name = ctypes.c_void_p(), ctypes.c_char_p()
    call.MXNDArrayLoadTensorProto(c_str(path), ctypes.byref(handle), ctypes.byref(name))
    tensor_name = py_str(name.value)
    return tensor_name, NDArray(handle, tensor_name)
