"""Optimizers (scheduler/train/optimizer.h): SGD with momentum and weight decay, and Adam.

    sgd = mxlite.SGD(learning_rate=0.01, momentum=0.9, rescale_grad=1 / 64)
    for ...: executor.forward(is_train=True, ...); executor.backward(); sgd.step(executor)

A step pushes one update per parameter to the engine; the next forward is ordered after it.
"""

import ctypes

from ._library import c_str, c_str_array, call


class Optimizer:
    """An optimizer by type name ("sgd", "adam") and its numeric options."""

    def __init__(self, optimizer_type, **options):
        keys = list(options)
        self._handle = ctypes.c_void_p()
        call.MXOptimizerCreate(c_str(optimizer_type), len(keys), c_str_array(keys),
                               c_str_array([repr(float(options[k])) for k in keys]),
                               ctypes.byref(self._handle))

    def __del__(self):
        if getattr(self, "_handle", None) is not None and self._handle.value:
            try:
                call.MXOptimizerFree(self._handle)
            except Exception:
                pass
            self._handle = None

    def step(self, executor):
        """Updates every parameter of a training executor from its gradient."""
        call.MXOptimizerUpdateAll(self._handle, executor._handle)

    def update(self, name, weight, gradient):
        """Updates one weight NDArray from its gradient; `name` keys the optimizer's state."""
        call.MXOptimizerUpdate(self._handle, c_str(name), weight.handle, gradient.handle)

    @property
    def learning_rate(self):
        rate = ctypes.c_double()
        call.MXOptimizerGetLearningRate(self._handle, ctypes.byref(rate))
        return rate.value

    @learning_rate.setter
    def learning_rate(self, rate):
        call.MXOptimizerSetLearningRate(self._handle, float(rate))


class SGD(Optimizer):
    def __init__(self, learning_rate=0.01, momentum=0.0, wd=0.0, rescale_grad=1.0,
                 clip_gradient=-1.0):
        super().__init__("sgd", learning_rate=learning_rate, momentum=momentum, wd=wd,
                         rescale_grad=rescale_grad, clip_gradient=clip_gradient)


class Adam(Optimizer):
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0,
                 rescale_grad=1.0, clip_gradient=-1.0):
        super().__init__("adam", learning_rate=learning_rate, beta1=beta1, beta2=beta2,
                         epsilon=epsilon, wd=wd, rescale_grad=rescale_grad,
                         clip_gradient=clip_gradient)
