"""Where the package finds libmxlite.so: MXNET_LIBRARY_PATH (file or folder), next to the
package, the build folder, and the error when none has it. Each case runs a fresh interpreter on a
copy of the package laid out as that case needs."""

import os
import shutil

import pytest

from conftest import STUB_DIR, run_python

PRINT_PATH = "import mxlite; print(mxlite.library_path)"


@pytest.fixture(scope="module")
def library_file(mxlite):
    return mxlite.library_path


def copy_package(destination):
    """A copy of python_stub/mxlite at destination/mxlite, without a library inside."""
    target = os.path.join(destination, "mxlite")
    shutil.copytree(os.path.join(STUB_DIR, "mxlite"), target,
                    ignore=shutil.ignore_patterns("__pycache__", "libmxlite.so"))
    return target


def loaded_path(result):
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_environment_variable_naming_the_file(tmp_path, library_file):
    copy_package(tmp_path)
    result = run_python(PRINT_PATH, {"MXNET_LIBRARY_PATH": library_file}, cwd=tmp_path)
    assert loaded_path(result) == library_file


def test_environment_variable_naming_a_folder(tmp_path, library_file):
    copy_package(tmp_path)
    folder = tmp_path / "lib"
    folder.mkdir()
    os.symlink(library_file, folder / "libmxlite.so")
    result = run_python(PRINT_PATH, {"MXNET_LIBRARY_PATH": str(folder)}, cwd=tmp_path)
    assert loaded_path(result) == str(folder / "libmxlite.so")


def test_next_to_the_package(tmp_path, library_file):
    package = copy_package(tmp_path)
    os.symlink(library_file, os.path.join(package, "libmxlite.so"))
    result = run_python(PRINT_PATH, {"MXNET_LIBRARY_PATH": None}, cwd=tmp_path)
    assert loaded_path(result) == os.path.join(package, "libmxlite.so")


def test_build_folder_of_the_source_tree(tmp_path, library_file):
    copy_package(tmp_path / "python_stub")
    (tmp_path / "build").mkdir()
    os.symlink(library_file, tmp_path / "build" / "libmxlite.so")
    result = run_python(PRINT_PATH, {"MXNET_LIBRARY_PATH": None}, cwd=tmp_path / "python_stub")
    assert loaded_path(result) == str(tmp_path / "build" / "libmxlite.so")


def test_environment_variable_without_a_library_warns_and_looks_further(tmp_path, library_file):
    package = copy_package(tmp_path)
    os.symlink(library_file, os.path.join(package, "libmxlite.so"))
    missing = str(tmp_path / "nowhere")
    result = run_python(PRINT_PATH, {"MXNET_LIBRARY_PATH": missing}, cwd=tmp_path)
    assert loaded_path(result) == os.path.join(package, "libmxlite.so")
    assert "MXNET_LIBRARY_PATH=" + missing in result.stderr


def test_not_found_lists_every_place_looked(tmp_path):
    package = copy_package(tmp_path / "python_stub")
    missing = str(tmp_path / "nowhere" / "libmxlite.so")
    result = run_python(
        "try:\n    import mxlite\nexcept ImportError as error:\n"
        "    print(type(error).__name__); print(error)\n",
        {"MXNET_LIBRARY_PATH": missing}, cwd=tmp_path / "python_stub")
    assert result.returncode == 0, result.stderr
    lines = result.stdout
    assert lines.startswith("LibraryNotFoundError\ncannot find libmxlite.so; looked in:")
    assert "MXNET_LIBRARY_PATH=" + missing in lines
    assert os.path.join(package, "libmxlite.so") in lines
    assert str(tmp_path / "build" / "libmxlite.so") in lines


def test_installed_package_without_the_variable_says_it_is_unset(tmp_path):
    copy_package(tmp_path)
    result = run_python("import mxlite", {"MXNET_LIBRARY_PATH": None}, cwd=tmp_path)
    assert result.returncode != 0
    assert "MXNET_LIBRARY_PATH: not set" in result.stderr
    assert "mxlite._library.LibraryNotFoundError" in result.stderr
    assert "the build folder" not in result.stderr  # outside python_stub/ there is no source tree
