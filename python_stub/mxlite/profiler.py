"""The profiler (engine/profiler.h): Chrome-trace JSON of the ops that ran (open in Perfetto)."""

from ._library import c_str, call


def start(mode=None):
    """Starts recording: mode 0 the executor's ops, 1 every op; None follows MXNET_PROFILER_MODE."""
    call.MXProfilerStart(-1 if mode is None else int(mode))


def stop():
    call.MXProfilerStop()


def dump(path="profile.json"):
    """Writes the events recorded since start() to `path` (complete, valid JSON)."""
    call.MXProfilerDump(c_str(str(path)))


def clear():
    call.MXProfilerClear()
