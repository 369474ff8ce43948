"""AppTest of the Tune page: analyze, change a parameter, sweep, promote, save and reload a config."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FAST_CHUNKERS = ["recursive-1100", "recursive-600", "recursive-600+pp", "fixed-512", "whole"]


def _run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.fixture
def tuned() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    _run(at)
    at.session_state["cs_coref"] = "none"
    at.session_state["cs_chunkers"] = FAST_CHUNKERS
    at.session_state["cs_candidates"] = ["recursive-1100", "recursive-600+pp"]
    _run(at)
    at.button(key="cs_analyze").click()
    _run(at)
    at.switch_page("pages/3_Tune.py")
    _run(at)
    return at


def test_change_parameter_updates_metrics(tuned):
    at = tuned
    assert at.title[0].value == "Tune a chunker"
    at.selectbox(key="cs_tune_chunker").select("recursive-600")
    _run(at)
    before = [m.value for m in at.metric]
    # an unchanged metric reads ±0.000, not a green "↑ +0.000"
    deltas = [m.delta for m in at.metric[:6]]
    assert "±0.000" in deltas and "+0.000" not in deltas, deltas
    at.number_input(key="cs_tune_p_recursive-600_chunk_size").set_value(200)
    _run(at)
    assert not at.error
    after = [m.value for m in at.metric]
    assert after != before
    # the text view opens on the part where the tuned boundaries differ most from the baseline's
    view = at.selectbox(key="cs_tune_view")
    n = [int(re.search(r"\((\d+) boundar", o).group(1)) if "differ)" in o else 0 for o in view.options]
    assert max(n) > 0 and n[view.index] == max(n), (view.index, view.options)
    counts = {m.label: m.proto.delta for m in at.metric if m.label in ("chunks", "tokens")}
    assert all(d[:1] in "+-" for d in counts.values()), counts  # both signed the same way ("+83" beside "+46")
    assert any("recursive-600@chunk_size=200" in c.value for c in at.caption)
    # an invalid combination is rejected at the widget with a message, nothing crashes
    at.number_input(key="cs_tune_p_recursive-600_chunk_overlap").set_value(500)
    _run(at)
    assert any("chunk_overlap (500 tokens) must be smaller than chunk_size (200 tokens)" in e.value for e in at.error)
    at.number_input(key="cs_tune_p_recursive-600_chunk_overlap").set_value(0)
    _run(at)
    assert not at.error


def tune_recursive_600(at: AppTest) -> AppTest:
    """recursive-600 picked on the Tune page with chunk_size 200 (what a user tunes first)."""
    at.selectbox(key="cs_tune_chunker").select("recursive-600")
    _run(at)
    at.number_input(key="cs_tune_p_recursive-600_chunk_size").set_value(200)
    return _run(at)


def sweep_and_promote(at: AppTest) -> AppTest:
    """A 150..350 sweep of chunk_size, then chunk_size=250 promoted as the candidate "my-250"."""
    at.number_input(key="cs_tune_sw_start_recursive-600_chunk_size").set_value(150)
    at.number_input(key="cs_tune_sw_stop_recursive-600_chunk_size").set_value(350)
    at.number_input(key="cs_tune_sw_step_recursive-600_chunk_size").set_value(100)
    at.button(key="cs_tune_sweep_run").click()
    _run(at)
    return at


def test_sweep_then_promote(tuned):
    at = sweep_and_promote(tune_recursive_600(tuned))
    sw = at.session_state["cs_tune_sweep"]
    assert [r["value"] for r in sw["rows"]] == [150, 250, 350] and sw["done"]
    assert any("stops gaining" in i.value for i in at.info)
    points = at.session_state["cs_tune_frontier_now"]
    names = [p["name"] for p in points]
    assert "recursive-600@chunk_size=250" in names and "recursive-1100" in names
    pick = names.index("recursive-600@chunk_size=250")
    at.selectbox(key="cs_tune_promote_pick").set_value(pick)
    at.text_input(key="cs_tune_promote_name").input("my-250")
    _run(at)
    at.button(key="cs_tune_promote").click()
    _run(at)
    assert any("Promoted “my-250”" in s.value for s in at.success)
    assert at.session_state["cs_variants"] == {"my-250": {"chunker": "recursive-600", "params": {"chunk_size": 250}}}
    assert "my-250" in at.session_state["cs_candidates"]
    # it joins the leaderboard and Compare without re-running the analysis
    at.switch_page("pages/1_Compare.py")
    _run(at)
    assert "my-250" in at.multiselect(key="cs_cmp_sel").options
    at.switch_page("app.py")
    _run(at)
    assert not any("Settings changed" in w.value for w in at.warning)
    board = at.dataframe[0].value
    assert "my-250" in list(board.iloc[:, 1]) or "my-250" in board.to_string()


def test_cancelled_sweep_draws_no_conclusion_and_missing_values_read_dash(tuned):
    at = sweep_and_promote(tune_recursive_600(tuned))
    assert at.dataframe[-1].proto.placeholder == "–"  # RC is not computed (coref none): "–" as on the tiles
    sw = at.session_state["cs_tune_sweep"]
    at.session_state["cs_tune_sweep"] = {**sw, "n": 40, "done": False}  # what Cancel after 3 of 40 values leaves
    _run(at)
    assert any("Sweep stopped after 3 of 40 values (cancelled)." in w.value for w in at.warning)
    assert not any("stops gaining (within" in i.value for i in at.info), [i.value for i in at.info]
    assert any("among the 3 values reached" in i.value for i in at.info)


def test_save_and_reload_config(tuned):
    at = sweep_and_promote(tune_recursive_600(tuned))
    names = [p["name"] for p in at.session_state["cs_tune_frontier_now"]]
    at.selectbox(key="cs_tune_promote_pick").set_value(names.index("recursive-600@chunk_size=250"))
    at.text_input(key="cs_tune_promote_name").input("my-250")
    _run(at)
    at.button(key="cs_tune_promote").click()
    _run(at)
    at.switch_page("pages/3_Tune.py")
    _run(at)
    at.selectbox(key="cs_tune_chunker").select("recursive-600")
    _run(at)
    code = next(c.value for c in at.code if "chunkscope.config/1" in c.value)
    from chunkscope.analysis.settings import parse_config
    settings, meta = parse_config(code, "toml")
    assert meta["chunker"] == "recursive-600"
    assert settings.params["recursive-600"] == {"chunk_size": 200}
    # its file is not named like the Overview's report ("<stem>.chunkscope.json"): one download replaced the other
    reproduce = next(c.value for c in at.caption if c.value.startswith("Reproduce:"))
    assert reproduce.startswith("Reproduce: `chunkscope analyze sample_policy.md --config sample_policy.tune.toml`")
    assert "my-250" in settings.variants and settings.coref == "none"
    # change things, then load the saved file back: widgets and sidebar settings are restored
    at.number_input(key="cs_tune_p_recursive-600_chunk_size").set_value(700)
    at.session_state["cs_max_tokens"] = 900
    _run(at)
    at.file_uploader(key="cs_tune_load").upload("cfg.toml", code.encode(), "application/toml")
    _run(at)
    assert any("Loaded cfg.toml" in s.value for s in at.success)
    assert at.number_input(key="cs_tune_p_recursive-600_chunk_size").value == 200
    assert at.session_state["cs_max_tokens"] == 1100
    assert at.session_state["cs_params"] == {"recursive-600": {"chunk_size": 200}}


def test_tune_state_survives_other_pages(tuned):
    at = tuned
    at.switch_page("pages/3_Tune.py")
    _run(at)
    at.selectbox(key="cs_tune_chunker").select("fixed-512")
    _run(at)
    at.number_input(key="cs_tune_p_fixed-512_size").set_value(128)
    _run(at)
    at.switch_page("pages/2_Chunk_inspector.py")
    _run(at)
    at.switch_page("pages/3_Tune.py")
    _run(at)
    assert at.selectbox(key="cs_tune_chunker").value == "fixed-512"
    assert at.number_input(key="cs_tune_p_fixed-512_size").value == 128


def test_promote_follows_the_current_configuration_and_refuses_a_copy(tuned):
    at = tuned
    cid = at.selectbox(key="cs_tune_chunker").value  # the winner's chunker, at its defaults
    winner = at.session_state["cs_tune_baseline"]
    key = f"cs_tune_p_{cid}_chunk_size"
    default = at.number_input(key=key).value
    at.number_input(key=key).set_value(700)
    _run(at)
    points = at.session_state["cs_tune_frontier_now"]
    picked = points[at.selectbox(key="cs_tune_promote_pick").value]["name"]
    assert picked == f"{cid}@chunk_size=700", picked  # not the point of the configuration shown first
    at.button(key="cs_tune_promote").click()
    _run(at)
    assert any(f"Promoted “{cid}@chunk_size=700”" in s.value for s in at.success)
    # back to the defaults: the point follows, and promoting it would only clone the winner
    at.number_input(key=key).set_value(default)
    _run(at)
    points = at.session_state["cs_tune_frontier_now"]
    assert points[at.selectbox(key="cs_tune_promote_pick").value]["name"] == f"{cid}@default"
    at.button(key="cs_tune_promote").click()
    _run(at)
    assert not at.success
    assert any(f"same configuration as “{winner}”" in e.value for e in at.error), [e.value for e in at.error]
    assert set(at.session_state["cs_variants"]) == {f"{cid}@chunk_size=700"}
    # a configuration already promoted is not promoted twice under another name
    at.number_input(key=key).set_value(700)
    _run(at)
    at.text_input(key="cs_tune_promote_name").input("again")
    _run(at)
    at.button(key="cs_tune_promote").click()
    _run(at)
    assert any(f"same configuration as “{cid}@chunk_size=700”" in e.value for e in at.error)
    assert set(at.session_state["cs_variants"]) == {f"{cid}@chunk_size=700"}


def test_score_over_fewer_metrics_is_said_as_on_the_overview(tuned):
    at = tuned
    at.selectbox(key="cs_tune_chunker").select("fixed-512")
    _run(at)
    shown = [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]
    # RC missing here as for the baseline: the Overview's warning, nothing about the deltas
    assert ("This configuration's score averages fewer than five metrics (missing: RC). "
            "RC: coreference disabled (--coref none).") in shown, shown
    at.number_input(key="cs_tune_p_fixed-512_size").set_value(5000)  # the whole document in one chunk: no DCC
    at.number_input(key="cs_tune_p_fixed-512_overlap").set_value(0)
    _run(at)
    shown = [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]
    baseline = at.session_state["cs_tune_baseline"]
    want = ("This configuration's score averages fewer than five metrics (missing: RC, DCC). "
            f"RC: coreference disabled (--coref none); DCC: one chunk only. The baseline {baseline} is missing "
            "RC, so the score delta compares means over different metrics.")
    assert want in shown, shown


def test_out_of_range_and_absurd_values_are_refused_with_a_message(tuned):
    at = tuned
    at.selectbox(key="cs_tune_chunker").select("fixed-512")
    _run(at)
    # above the declared maximum: said, not silently computed at the maximum
    at.number_input(key="cs_tune_p_fixed-512_size").set_value(2_000_000)
    _run(at)
    assert at.number_input(key="cs_tune_p_fixed-512_size").value == 2_000_000  # what was typed stays
    assert [e.value for e in at.error] == ["Invalid: size must be <= 1,000,000 (got 2000000)"]
    assert not at.metric  # nothing computed
    # an overlap that would embed the text ~2000 times: one line, nothing computed
    at.number_input(key="cs_tune_p_fixed-512_size").set_value(2000)
    at.number_input(key="cs_tune_p_fixed-512_overlap").set_value(1999)
    _run(at)
    assert [e.value for e in at.error] == [
        "Invalid: overlap (1999 tokens) would embed the text about 2,000 times (size / (size - overlap)), "
        "at most 4: keep overlap <= 1,500 tokens at size 2,000"]
    assert not at.metric
    at.number_input(key="cs_tune_p_fixed-512_overlap").set_value(1000)
    _run(at)
    assert not at.error and at.metric
