"""mxlite.settings: a dict over the settings registry, with sources and the registry's errors."""

import pytest

from conftest import run_python

NAME = "MXNET_CUDNN_AUTOTUNE_DEFAULT"


@pytest.fixture
def settings(mxlite):
    yield mxlite.settings
    for name in (NAME, "MXNET_EXEC_ENABLE_INPLACE"):
        del mxlite.settings[name]


def test_program_value_round_trips_and_reset_restores_the_default(settings):
    before = settings.get_with_source(NAME)  # the default, unless the environment sets it
    assert before in {("1", "default"), (before[0], "environment")}
    settings[NAME] = 2
    assert settings[NAME] == "2"
    assert settings.source(NAME) == "program"
    del settings[NAME]
    assert settings.get_with_source(NAME) == before


def test_aliases_and_booleans_are_stored_canonically(settings):
    settings[NAME] = "fastest"
    assert settings[NAME] == "2"
    settings["MXNET_EXEC_ENABLE_INPLACE"] = False
    assert settings["MXNET_EXEC_ENABLE_INPLACE"] == "0"


def test_invalid_value_raises_with_the_registry_message(settings, mxlite):
    settings[NAME] = 2
    with pytest.raises(mxlite.MXLiteError) as error:
        settings[NAME] = 3
    message = str(error.value)
    assert "invalid value '3' for MXNET_CUDNN_AUTOTUNE_DEFAULT" in message
    assert "allowed values are 0, 1, 2 (or off, limited_workspace, fastest)" in message
    assert settings[NAME] == "2"  # the rejected value changed nothing


def test_unknown_name_names_the_closest_setting(settings, mxlite):
    with pytest.raises(mxlite.UnknownSettingError) as error:
        settings["MXNET_ENGNE_TYPE"]
    assert "did you mean MXNET_ENGINE_TYPE?" in str(error.value)
    assert isinstance(error.value, mxlite.MXLiteError)
    assert isinstance(error.value, KeyError)
    with pytest.raises(mxlite.MXLiteError):
        settings["MXNET_ENGNE_TYPE"] = "NaiveEngine"
    assert settings.get("MXNET_ENGNE_TYPE", "absent") == "absent"


def test_behaves_as_a_mapping_of_every_setting(settings):
    names = list(settings)
    assert "MXNET_ENGINE_TYPE" in settings and "MXNET_FOO" not in settings
    assert len(settings) == len(names) == len(set(names))
    assert set(settings.with_sources()) == set(names)
    info = settings.describe(NAME)
    assert (info.type, info.default) == ("enum", "1")
    assert "limited_workspace" in info.allowed and info.doc


def test_environment_values_report_their_source(tmp_path):
    result = run_python(
        "import mxlite; print(mxlite.settings.get_with_source('MXNET_EXEC_NUM_TEMP'))",
        {"MXNET_EXEC_NUM_TEMP": "3"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "('3', 'environment')"


def test_invalid_environment_value_raises_on_read():
    result = run_python(
        "import mxlite\n"
        "try:\n    mxlite.settings['MXNET_ENGINE_TYPE']\n"
        "except mxlite.MXLiteError as error:\n    print(error)\n",
        {"MXNET_ENGINE_TYPE": "Foo"})
    assert result.returncode == 0, result.stderr
    assert "invalid value 'Foo' for MXNET_ENGINE_TYPE (from environment)" in result.stdout
