"""In a real browser: the provisional leaderboard shows before the embeddings finish, then the winner.

The embedding stage is held (test setting ``CHUNKSCOPE_TEST_HOLD_EMBEDDINGS``: it waits until a
file exists) until the provisional view has been seen, so the test is deterministic. The
screenshot of the provisional state goes to ``$CHUNKSCOPE_SCREENSHOTS`` (else the test's folder).
"""

from __future__ import annotations

import re

import pytest
from browser_tour import WINNER, _wait_idle, browser, browser_test_folders, open_with_upload, streamlit_app

pytestmark = pytest.mark.timeout(400)


def test_provisional_leaderboard_then_final_winner(tmp_path, monkeypatch):
    sample, shots, cache = browser_test_folders(tmp_path, "policy_progressive.md")
    flag = tmp_path / "release-embeddings"
    monkeypatch.setenv("CHUNKSCOPE_TEST_HOLD_EMBEDDINGS", str(flag))
    with streamlit_app(cache) as url, browser() as ctx:
        page = open_with_upload(ctx, url, sample)
        page.get_by_text(sample.stem, exact=True).first.wait_for(timeout=60_000)
        _wait_idle(page)
        page.get_by_role("button", name="Analyze").click()
        # provisional: structure scores known, ICC/DCC pending, the embedding stage held
        page.locator(".cs-provisional").first.wait_for(timeout=180_000)
        card = page.locator(".cs-provisional").first.inner_text()
        assert "provisional" in card and "ICC/DCC pending" in card
        # the provisional score says what it is made of (it is not comparable to the final one)
        # (waited for: the card and the leaderboard under it arrive in separate deltas, far apart on a busy machine)
        page.get_by_text(re.compile(r"score on (RC, )?BI, SC so far")).first.wait_for(timeout=60_000)
        page.locator('[data-testid="stDataFrame"]').first.wait_for()
        assert page.get_by_role("button", name="Cancel analysis").count() == 1
        assert not flag.exists()  # the embeddings have not run: what is shown is provisional
        page.mouse.move(5, 995)  # no tooltip over the view
        page.wait_for_timeout(500)
        page.screenshot(path=str(shots / "provisional.png"))
        flag.write_text("go")
        # the final winner: the card without the provisional mark, with where it leads the runner-up
        page.get_by_text("Leads ", exact=False).first.wait_for(timeout=300_000)
        _wait_idle(page)
        final = page.locator(".st-key-cs_winner_card").inner_text()
        assert WINNER in final and "provisional" not in final.lower()
        assert page.locator(".cs-provisional").count() == 0
        page.screenshot(path=str(shots / "final.png"))
    assert (shots / "provisional.png").stat().st_size > 10_000


def test_a_rejected_file_replaces_nothing_in_a_real_browser(tmp_path):
    """A browser replacing the uploaded file removes the old one first: the document shown must survive
    that and the rejected file (AppTest cannot see the removal in between)."""
    sample, shots, cache = browser_test_folders(tmp_path, "policy_kept.md")
    bad = tmp_path / "notes.docx"
    bad.write_bytes(b"PK\x03\x04 junk")
    with streamlit_app(cache) as url, browser() as ctx:
        page = open_with_upload(ctx, url, sample)
        page.get_by_text(sample.stem, exact=True).first.wait_for(timeout=60_000)
        _wait_idle(page)
        page.locator('[data-testid="stFileUploader"] input[type=file]').first.set_input_files(str(bad))
        page.get_by_text("is not a Word .docx file", exact=False).first.wait_for(timeout=60_000)
        _wait_idle(page)
        assert page.get_by_text(sample.stem, exact=True).count() >= 1  # the document is still the one shown
        assert page.get_by_text(f"still showing {sample.stem}", exact=False).count() >= 1
        page.screenshot(path=str(shots / "rejected-upload.png"))
