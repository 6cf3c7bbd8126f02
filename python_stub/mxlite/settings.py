"""mxlite.settings: the settings registry (core/settings.h) as a dict of name -> effective value.

    mxlite.settings["MXNET_ENGINE_TYPE"]              # 'ThreadedEnginePerDevice'
    mxlite.settings.source("MXNET_ENGINE_TYPE")       # 'default' | 'environment' | 'program'
    mxlite.settings["MXNET_CUDNN_AUTOTUNE_DEFAULT"] = 2   # a program value (validated)
    del mxlite.settings["MXNET_CUDNN_AUTOTUNE_DEFAULT"]   # back to the environment or default

Values are strings in the registry's canonical spelling. Setting a value the registry rejects
raises MXLiteError with its message (naming the variable, the value and what is allowed); an
unknown name raises UnknownSettingError (an MXLiteError and a KeyError) naming the closest one.
"""

import collections
import ctypes
from collections.abc import MutableMapping

from ._library import MXLiteError, c_str, call, list_names, py_str

SettingInfo = collections.namedtuple("SettingInfo", "name type default allowed doc")


class UnknownSettingError(MXLiteError, KeyError):
    """A setting name the registry does not know."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


def _text(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


class Settings(MutableMapping):
    def _names(self):
        return list_names("MXSettingList")

    def _check_known(self, name):
        if not isinstance(name, str) or name not in self._names():
            try:  # the registry's message names the closest known setting
                call.MXSettingGet(c_str(str(name)), ctypes.byref(ctypes.c_char_p()),
                                  ctypes.byref(ctypes.c_char_p()))
            except MXLiteError as error:
                raise UnknownSettingError(str(error)) from None
            raise UnknownSettingError("unknown setting %r" % (name,))

    def get_with_source(self, name):
        """(effective value, source) of a setting."""
        self._check_known(name)
        value, source = ctypes.c_char_p(), ctypes.c_char_p()
        call.MXSettingGet(c_str(name), ctypes.byref(value), ctypes.byref(source))
        return py_str(value.value), py_str(source.value)

    def source(self, name):
        """Where the effective value comes from: 'program', 'environment' or 'default'."""
        return self.get_with_source(name)[1]

    def describe(self, name):
        """The setting's type, built-in default, allowed values and description."""
        self._check_known(name)
        fields = [ctypes.c_char_p() for _ in range(4)]
        call.MXSettingDescribe(c_str(name), *[ctypes.byref(f) for f in fields])
        return SettingInfo(name, *[py_str(f.value) for f in fields])

    def with_sources(self):
        """{name: (value, source)} for every setting."""
        return {name: self.get_with_source(name) for name in self._names()}

    def __getitem__(self, name):
        return self.get_with_source(name)[0]

    def __setitem__(self, name, value):
        self._check_known(name)
        call.MXSettingSet(c_str(name), c_str(_text(value)))

    def __delitem__(self, name):
        self._check_known(name)
        call.MXSettingReset(c_str(name))

    def __contains__(self, name):
        return isinstance(name, str) and name in self._names()

    def __iter__(self):
        return iter(self._names())

    def __len__(self):
        return len(self._names())

    def __repr__(self):
        lines = ["%s=%r (%s)" % (n, v, s) for n, (v, s) in self.with_sources().items()]
        return "mxlite.settings{\n  " + ",\n  ".join(lines) + "\n}"


settings = Settings()
