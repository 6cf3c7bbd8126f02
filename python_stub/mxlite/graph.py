"""Graph building, mirroring the C++ GraphBuilder (scheduler/graph/graph_builder.h):

    g = mxlite.GraphBuilder()
    x = g.input("data", (64, 1, 28, 28))
    y = g.conv(x, num_filter=32, kernel=(5, 5), pad=(2, 2))
    y = g.max_pool(g.relu(y), kernel=(2, 2), stride=(2, 2))
    y = g.fully_connected(g.flatten(y), num_hidden=10)
    net = g.build([g.softmax_output(y, g.input("softmax_label", (64,)))])
    executor = net.bind("cpu", training=True)

g.op(name, inputs, **attributes) applies any registered op with MXNet's attribute names; tuples
become "(5,5)", booleans "true"/"false". Parameters an op needs and the call does not pass are
created as "<node>_<input>" ("conv0_weight"). Errors (unknown op or attribute, bad values, wrong
input counts) raise MXLiteError with mxlite's message.
"""

import ctypes

from ._library import c_dims, c_str, c_str_array, call, list_names, py_str
from .ndarray import _dtype_name


def _attribute_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(str(int(v)) for v in value) + ")"
    if isinstance(value, float):
        return repr(value)
    return str(value)


class Symbol:
    """One output of a node under construction; valid with the builder that made it."""

    def __init__(self, builder, index):
        self.builder = builder
        self.index = index

    @property
    def name(self):
        """The name of the node this symbol is an output of."""
        out = ctypes.c_char_p()
        call.MXGraphBuilderSymbolName(self.builder._handle, self.index, ctypes.byref(out))
        return py_str(out.value)

    def __repr__(self):
        return "<Symbol %s>" % self.name


class Graph:
    """A built network: bind it to a device to run it."""

    def __init__(self, handle):
        self._handle = handle

    def __del__(self):
        if getattr(self, "_handle", None) is not None and self._handle.value:
            try:
                call.MXGraphFree(self._handle)
            except Exception:
                pass
            self._handle = None

    @property
    def input_names(self):
        return list_names("MXGraphListVariables", self._handle, 0)

    @property
    def parameter_names(self):
        return list_names("MXGraphListVariables", self._handle, 1)

    @property
    def auxiliary_names(self):
        return list_names("MXGraphListVariables", self._handle, 2)

    def bind(self, context="cpu", training=False, arrays=None, input_gradients=(),
             input_shapes=None, seed=0):
        """An Executor for this graph; see mxlite.Executor.bind."""
        from .executor import Executor
        return Executor.bind(self, context, training, arrays, input_gradients, input_shapes, seed)


class GraphBuilder:
    def __init__(self):
        self._handle = ctypes.c_void_p()
        call.MXGraphBuilderCreate(ctypes.byref(self._handle))

    def __del__(self):
        if getattr(self, "_handle", None) is not None and self._handle.value:
            try:
                call.MXGraphBuilderFree(self._handle)
            except Exception:
                pass
            self._handle = None

    def _symbol(self, out):
        return Symbol(self, out.value)

    def _indices(self, symbols):
        for symbol in symbols:
            if not isinstance(symbol, Symbol) or symbol.builder is not self:
                raise TypeError("expected Symbols of this GraphBuilder, got %r" % (symbol,))
        return (ctypes.c_int * max(len(symbols), 1))(*[s.index for s in symbols])

    def input(self, name, shape, dtype="float32"):
        dims, ndim = c_dims(shape)
        out = ctypes.c_int()
        call.MXGraphBuilderInput(self._handle, c_str(name), dims, ndim, c_str(_dtype_name(dtype)),
                                 ctypes.byref(out))
        return self._symbol(out)

    def parameter(self, name, shape=None):
        """A parameter variable; without a shape it is inferred when the graph is bound."""
        dims, ndim = c_dims(shape if shape is not None else ())
        out = ctypes.c_int()
        call.MXGraphBuilderParameter(self._handle, c_str(name), dims,
                                     ndim if shape is not None else -1, ctypes.byref(out))
        return self._symbol(out)

    def op(self, op, inputs, name=None, **attributes):
        """Any registered op by name, with attributes in MXNet spelling."""
        inputs = list(inputs)
        attributes = {k: v for k, v in attributes.items() if v is not None}
        keys = list(attributes)
        out = ctypes.c_int()
        call.MXGraphBuilderOp(self._handle, c_str(op), len(inputs), self._indices(inputs),
                              len(keys), c_str_array(keys),
                              c_str_array([_attribute_text(attributes[k]) for k in keys]),
                              c_str(name) if name else None, ctypes.byref(out))
        return self._symbol(out)

    def outputs(self, symbol):
        """Every visible output of the node behind `symbol`."""
        capacity = 16
        out = (ctypes.c_int * capacity)()
        count = ctypes.c_uint32()
        call.MXGraphBuilderOutputs(self._handle, symbol.index, capacity, ctypes.byref(count), out)
        return [Symbol(self, out[i]) for i in range(count.value)]

    # The typed shorthands of the C++ builder, with the same defaults.

    def conv(self, x, num_filter, kernel, stride=(), pad=(), dilate=(), num_group=1,
             no_bias=False, cudnn_tune=None, layout=None, workspace=None, name=None):
        return self.op("Convolution", [x], name, num_filter=num_filter, kernel=kernel,
                       stride=stride or None, pad=pad or None, dilate=dilate or None,
                       num_group=num_group, no_bias=no_bias, cudnn_tune=cudnn_tune,
                       layout=layout, workspace=workspace)

    def fully_connected(self, x, num_hidden, no_bias=False, flatten=True, name=None):
        return self.op("FullyConnected", [x], name, num_hidden=num_hidden, no_bias=no_bias,
                       flatten=flatten)

    def activation(self, x, act_type, name=None):
        return self.op("Activation", [x], name, act_type=act_type)

    def relu(self, x, name=None):
        return self.activation(x, "relu", name)

    def sigmoid(self, x, name=None):
        return self.activation(x, "sigmoid", name)

    def tanh(self, x, name=None):
        return self.activation(x, "tanh", name)

    def _pool(self, x, pool_type, kernel, stride, pad, ceil_mode, count_include_pad, name):
        return self.op("Pooling", [x], name, pool_type=pool_type, kernel=kernel,
                       stride=stride or None, pad=pad or None,
                       pooling_convention="full" if ceil_mode else "valid",
                       count_include_pad=count_include_pad)

    def max_pool(self, x, kernel, stride=(), pad=(), ceil_mode=False, count_include_pad=True,
                 name=None):
        return self._pool(x, "max", kernel, stride, pad, ceil_mode, count_include_pad, name)

    def avg_pool(self, x, kernel, stride=(), pad=(), ceil_mode=False, count_include_pad=True,
                 name=None):
        return self._pool(x, "avg", kernel, stride, pad, ceil_mode, count_include_pad, name)

    def global_avg_pool(self, x, name=None):
        return self.op("Pooling", [x], name, pool_type="avg", global_pool=True)

    def batch_norm(self, x, eps=1e-3, momentum=0.9, fix_gamma=False, use_global_stats=False,
                   name=None):
        return self.op("BatchNorm", [x], name, eps=float(eps), momentum=float(momentum),
                       fix_gamma=fix_gamma, use_global_stats=use_global_stats)

    def layer_norm(self, x, axis=-1, eps=1e-5, name=None):
        return self.op("LayerNorm", [x], name, axis=axis, eps=float(eps))

    def group_norm(self, x, num_groups, eps=1e-5, name=None):
        return self.op("GroupNorm", [x], name, num_groups=num_groups, eps=float(eps))

    def silu(self, x, name=None):
        return self.op("silu", [x], name)

    def hard_swish(self, x, name=None):
        return self.op("hard_swish", [x], name)

    def hard_sigmoid(self, x, name=None):
        """max(0, min(1, x / 6 + 1 / 2)): PyTorch's Hardsigmoid."""
        return self.op("hard_sigmoid", [x], name, alpha=0.1666666666666667, beta=0.5)

    def multiply(self, a, b, name=None):
        return self.op("broadcast_mul", [a, b], name)

    def maximum(self, a, b, name=None):
        return self.op("broadcast_maximum", [a, b], name)

    def minimum(self, a, b, name=None):
        return self.op("broadcast_minimum", [a, b], name)

    def mean(self, x, axis=(), keepdims=False, name=None):
        return self.op("mean", [x], name, axis=tuple(axis), keepdims=keepdims)

    def sum(self, x, axis=(), keepdims=False, name=None):
        return self.op("sum", [x], name, axis=tuple(axis), keepdims=keepdims)

    def slice(self, x, begin, end, step=(), name=None):
        return self.op("slice", [x], name, begin=tuple(begin), end=tuple(end), step=tuple(step))

    def reshape(self, x, shape, name=None):
        return self.op("Reshape", [x], name, shape=tuple(shape))

    def resize(self, x, size, mode="nearest", coordinate_transformation_mode="half_pixel",
               name=None):
        """The trailing axes resampled to `size` (nearest, or linear: bilinear on images)."""
        return self.op("Resize", [x], name, size=tuple(size), mode=mode,
                       coordinate_transformation_mode=coordinate_transformation_mode)

    def gelu(self, x, name=None):
        return self.op("gelu", [x], name)

    def dropout(self, x, p, name=None):
        return self.op("Dropout", [x], name, p=float(p))

    def flatten(self, x, name=None):
        return self.op("Flatten", [x], name)

    def add(self, a, b, name=None):
        return self.op("broadcast_add", [a, b], name)

    def concat(self, inputs, dim=1, name=None):
        return self.op("Concat", list(inputs), name, num_args=len(inputs), dim=dim)

    def softmax_output(self, x, label, name=None):
        return self.op("SoftmaxOutput", [x, label], name)

    def build(self, outputs):
        """The Graph of everything `outputs` depend on; the builder stays usable."""
        outputs = list(outputs)
        handle = ctypes.c_void_p()
        call.MXGraphBuilderBuild(self._handle, len(outputs), self._indices(outputs),
                                 ctypes.byref(handle))
        return Graph(handle)
