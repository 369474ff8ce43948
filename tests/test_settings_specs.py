"""Each analysis setting is declared once (``SettingSpec``); the CLI, settings files, the sidebar and the cache
keys are generated from it. These tests fail when a declaration and one of its consumers disagree."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import pytest

from chunkscope.analysis.settings import (
    RANKING,
    SCORES,
    SETTING_SPECS,
    SPECS,
    SettingError,
    Settings,
    config_text,
    parse_config,
    settings_affecting,
)
from chunkscope.cli import build_parser

# every value differs from the default, so a setting dropped on the way shows
NOT_DEFAULT = dict(
    chunkers=("whole", "fixed-512"), candidates=("whole",), params={"fixed-512": {"size": 300}}, min_tokens=50,
    max_tokens=900, bi_tolerance=3, window_tokens=2000, window_step=2, weights={"RC": 0.5, "ICC": 1.0, "DCC": 1.0,
                                                                                "BI": 2.0, "SC": 1.0},
    coref="none", mentions="m.json", embedder="some/model", embedding_mode="exact", embedding_backend="reference",
    variants={"v1": {"chunker": "fixed-512", "params": {"size": 200}}}, tie_break="score", retrieval_weight=0.5,
)


def _ui_analysis():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the app's ui package
    import ui.analysis

    return ui.analysis


def _parser(command: str) -> argparse.ArgumentParser:
    return build_parser().commands[command]


def _options(command: str) -> dict[str, str]:
    """flag -> dest of a command's options."""
    return {o: a.dest for a in _parser(command)._actions for o in a.option_strings}


def test_every_setting_is_declared_and_the_sample_covers_them():
    assert [s.name for s in SETTING_SPECS] == [f.name for f in dataclasses.fields(Settings)]
    assert set(NOT_DEFAULT) == set(SPECS)
    assert all(NOT_DEFAULT[s.name] != s.default for s in SETTING_SPECS)
    for s in SETTING_SPECS:
        assert s.help and s.affects in ("chunkings", SCORES, RANKING, "selection"), s.name
        assert s.help.strip() == s.help and "default" not in s.help, f"{s.name}: the default is added, not typed"


@pytest.mark.parametrize("command", ["analyze", "sweep", "corpus"])
def test_every_flag_of_a_setting_is_on_the_analysis_commands(command):
    options = _options(command)
    for s in SETTING_SPECS:
        if s.cli and not s.cli_group and not (command == "sweep" and s.name == "params"):  # sweep's --param: its own
            assert options.get(s.cli) == s.name, (command, s.cli)
    # and every option named like a setting is that setting's declared flag
    for flag, dest in options.items():
        if dest in SPECS:
            assert SPECS[dest].cli == flag, (command, flag)


def test_the_retrieval_check_options_and_the_retrieval_command_take_their_settings_as_declared():
    assert _options("analyze")["--retrieval-weight"] == "retrieval_weight"
    options = _options("retrieval")
    for name in ("chunkers", "params", "embedder", "embedding_mode", "embedding_backend"):
        assert options[SPECS[name].cli] == name
    choices = {a.dest: a.choices for a in _parser("retrieval")._actions}
    assert choices["embedding_backend"] == list(SPECS["embedding_backend"].choices)


def test_only_settings_files_and_the_app_set_the_variants():
    assert [s.name for s in SETTING_SPECS if not s.cli] == ["variants"]


def test_help_shows_each_declared_default():
    text = " ".join(_parser("analyze").format_help().split())
    for s in SETTING_SPECS:
        if s.cli and s.default_text():
            assert " ".join(f"(default: {s.default_text()})".split()) in text.replace("- ", "-"), s.name
    assert "(default: 1100)" in text and "(default: page+pp,recursive-1100+pp" in text.replace("- ", "-")


@pytest.mark.parametrize("fmt", ["toml", "json"])
def test_every_setting_round_trips_through_a_settings_file(fmt):
    s = Settings(**NOT_DEFAULT)
    assert Settings.from_dict(s.to_dict()) == s
    back, _ = parse_config(config_text(s, fmt), fmt)
    assert back == s


def test_cli_flags_set_every_setting_they_declare(tmp_path):
    from chunkscope.cli.settings import settings_table

    mentions = tmp_path / "m.json"
    mentions.write_text("[]", encoding="utf-8")
    argv = ["analyze", "doc.md", "--chunkers", "whole,fixed-512", "--candidates", "whole", "--param",
            "fixed-512.size=300", "--min-tokens", "50", "--max-tokens", "900", "--bi-tolerance", "3",
            "--window-tokens", "2000", "--window-step", "2", "--weights", "RC=0.5,BI=2", "--coref", "precomputed",
            "--mentions", str(mentions), "--embedder", "some/model", "--embedding-mode", "exact",
            "--embedding-backend", "reference", "--tie-break", "score", "--retrieval-weight", "0.5"]
    table = settings_table(build_parser().parse_args(argv))
    flagged = {s.name for s in SETTING_SPECS if s.cli}
    assert set(table) == flagged
    s = Settings.from_dict(table)
    for name in flagged - {"params", "mentions", "coref", "weights"}:
        assert getattr(s, name) == NOT_DEFAULT[name], name
    assert s.params == {"fixed-512": {"size": "300"}} and s.mentions == str(mentions)
    assert s.weights == NOT_DEFAULT["weights"]


def test_cache_keys_come_from_what_each_setting_affects():
    from chunkscope import tune

    # the Tune cache's key: what changes a chunking's metrics (weights only re-weight the score)
    assert tune.METRIC_KEYS == ("min_tokens", "max_tokens", "bi_tolerance", "window_tokens", "window_step", "coref",
                                "mentions", "embedder", "embedding_mode", "embedding_backend")
    assert settings_affecting(SCORES) == tune.METRIC_KEYS
    ui_analysis = _ui_analysis()
    assert ui_analysis.RERANKED == ("candidates", "weights")  # re-ranked in place: not in the report's key


def test_the_sidebar_draws_every_setting_declared_with_a_widget_once():
    ui_analysis = _ui_analysis()
    placed = [n for _, names in ui_analysis.SIDEBAR for n in names]
    assert sorted(placed) == sorted(s.name for s in SETTING_SPECS if s.widget)
    assert all(SPECS[n].widget in ui_analysis._DRAW for n in placed)
    assert set(ui_analysis.SETTING_WIDGETS) <= set(ui_analysis._WIDGETS)  # kept across pages
    for s in SETTING_SPECS:
        if s.widget in ("number", "radio", "select", "pick", "sliders", "text"):
            assert s.key.startswith("cs_") and s.label, s.name


def test_a_widget_range_is_the_settings_range():
    """One lower bound for the sidebar and validate (the DCC window's was 100 in the app, 1 in validate)."""
    for s in SETTING_SPECS:
        if s.widget == "number":
            assert s.min is not None
            lowest = {"min_tokens": 0, s.name: int(s.min)}
            Settings(**lowest).validate()
            with pytest.raises(SettingError) as e:
                Settings(**{**lowest, s.name: int(s.min) - 1}).validate()
            assert e.value.setting == s.name


def test_validate_with_the_registry_names_the_setting():
    from chunkscope.chunkers import registry

    Settings(chunkers=("nope",)).validate()  # without the registry: an analysis reports a failed row
    for settings, setting, needle in [
        (Settings(chunkers=("nope",)), "chunkers", "unknown chunker 'nope'"),
        (Settings(candidates=("nope",)), "candidates", "unknown chunker 'nope'"),
        (Settings(params={"fixed-512": {"size": "x"}}), "params", "fixed-512: size: expected int"),
        (Settings(variants={"v": {"chunker": "nope"}}), "variants", "variant 'v': unknown chunker 'nope'"),
        (Settings(variants={"v": {"chunker": "fixed-512", "params": {"size": 0}}}), "variants", "size must be >= 1"),
    ]:
        with pytest.raises(SettingError) as e:
            settings.validate(registry)
        assert e.value.setting == setting and needle in str(e.value)


def test_a_chunkers_check_collects_every_problem_and_resolve_raises_them():
    from chunkscope import tune
    from chunkscope.chunkers import registry
    from chunkscope.chunkers.base import ParamError

    spec = registry.get("fixed-512")
    checked = spec.check({"size": "x", "nope": 1})
    assert checked.problems == ["size: expected int, got 'x'", "unknown parameter 'nope' (known: size, overlap)"]
    assert tune.problems("fixed-512", {"size": "x", "nope": 1}) == checked.problems
    assert spec.check({"size": 100}).values == {"size": 100, "overlap": 64} and not spec.check({"size": 100}).problems
    with pytest.raises(ParamError, match="fixed-512: size: expected int"):
        spec.resolve_params({"size": "x"})


def test_each_recursive_size_keeps_the_declared_parameters_but_its_default():
    from chunkscope.chunkers import registry
    from chunkscope.chunkers.recursive import RECURSIVE_PARAMS

    for size in (1100, 600):
        params = registry.get(f"recursive-{size}").params
        assert [dataclasses.replace(p, default=0) for p in params] == [
            dataclasses.replace(p, default=0) for p in RECURSIVE_PARAMS]
        assert params[0].default == size


def test_a_loaded_settings_file_restores_every_sidebar_widget():
    """Tune's settings-file loader sets each sidebar widget from the declarations (it once typed the keys again
    and forgot the embedding backend)."""
    from streamlit.testing.v1 import AppTest

    root = str(Path(__file__).resolve().parent.parent)
    if root not in sys.path:  # the app's ui/ package, as tests/test_ux_app.py does
        sys.path.insert(0, root)

    def restore():
        import streamlit as st

        from chunkscope.analysis.settings import Settings
        from ui.analysis import restore_sidebar

        s = Settings(min_tokens=200, max_tokens=900, embedding_backend="reference", embedding_mode="exact",
                     weights={"RC": 2.0, "ICC": 9.0, "DCC": 1.0, "BI": 1.0, "SC": 0.5},
                     chunkers=("page", "recursive-600+pp", "nope"), candidates=("page",))
        restore_sidebar(s, ["page", "recursive-600+pp"])
        st.write("done")

    at = AppTest.from_function(restore, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    ss = at.session_state
    assert (ss["cs_min_tokens"], ss["cs_max_tokens"], ss["cs_backend"], ss["cs_mode"]) == (200, 900, "reference", "exact")
    assert ss["cs_w_RC"] == 2.0 and ss["cs_w_ICC"] == 3.0 and ss["cs_w_SC"] == 0.5  # clamped to the sliders' range
    assert ss["cs_chunkers"] == ["page", "recursive-600+pp"] and ss["cs_candidates"] == ["page"]
    assert ss["cs_embedder"] == "" and ss["cs_coref"] == "heuristic"
