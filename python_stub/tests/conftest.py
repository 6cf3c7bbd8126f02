"""Makes the package in python_stub/ importable without installing it. CTest (python_stub_pytest,
run by tools/test.sh) points MXNET_LIBRARY_PATH at the library it built; without it the package
finds <repository>/build."""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

STUB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, STUB_DIR)

# Binding convolutions tunes them into the user tuning DB under MXNET_HOME: keep a run outside
# CTest (which sets MXNET_HOME) from writing into ~/.mxnet. Set before the library reads it.
if not os.environ.get("MXNET_HOME"):
    os.environ["MXNET_HOME"] = tempfile.mkdtemp(prefix="mxlite-pytest-home-")
    atexit.register(shutil.rmtree, os.environ["MXNET_HOME"], True)


def run_python(code, env_changes, cwd=None):
    """Runs `code` in a fresh interpreter (the library is loaded once per process), with the
    environment changed by `env_changes` (a value of None removes the variable). It runs in `cwd`,
    python_stub/ by default, so `import mxlite` finds the package there."""
    env = dict(os.environ)
    for name, value in env_changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd or STUB_DIR,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="session")
def mxlite():
    import mxlite as module
    return module
