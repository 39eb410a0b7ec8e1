"""Issue 49 in Chromium: a game shows its dice commitment (table head and move log) from
before the first roll; its review reveals the seed, and "Check the dice" recomputes every
roll in the page, refusing an edited record. The page's dice checker is a twin of
``yahtzee verify-game``: where Chromium or Playwright is missing this test fails, not skips
(tests/web/twins.py)."""

from __future__ import annotations

import hashlib
import re

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("uvicorn", reason="needs the web extra: pip install 'yahtzee-rl[web]'")

import twins
from browsing import more_options, score_best, tid


@pytest.fixture(scope="module", autouse=True)
def _chromium():
    """Before the ``browser`` fixture (which skips where its tools are missing): fail."""
    twins.require_chromium()


CHECK = """async ([record]) => {
  const dice = await import('/static/js/fair_dice.js');
  return dice.verifyRecord(record);
}"""


def test_commitment_before_the_first_roll_then_the_seed_checked_in_the_page(open_page, server):
    page = open_page(1280, 900, False, "en-US")
    page.goto(f"{server.url}/?pace=0")
    more_options(page)
    if not page.input_value(tid("name")):
        page.fill(tid("name"), "Ada")
    page.select_option(tid("seat-kind-1"), "greedy")
    page.click(tid("play"))
    page.wait_for_selector('button[data-testid^="box-0-"]')
    # before any move of ours: the commitment in the head and in the move log
    commitment = page.get_attribute(tid("dice-commitment"), "data-commitment")
    assert re.fullmatch(r"[0-9a-f]{64}", commitment) and page.is_visible(tid("dice-commitment"))
    assert commitment[:12] in page.text_content(tid("dice-commitment"))
    assert commitment in page.text_content(tid("log-commitment"))
    for _ in range(13):
        score_best(page)
    page.wait_for_selector(f"{tid('result')}:not([hidden])")
    page.click(f"{tid('result')} {tid('review-link')}")
    page.wait_for_selector(tid("dice-seed"))
    seed = page.text_content(tid("dice-seed"))
    assert hashlib.sha256(bytes.fromhex(seed)).hexdigest() == commitment
    assert page.text_content(tid("review-commitment")) == commitment
    page.click(tid("verify-dice"))
    page.wait_for_selector(f"{tid('verify-result')}[data-ok]")
    assert page.get_attribute(tid("verify-result"), "data-ok") == "true"
    assert "These dice follow from the seed" in page.text_content(tid("verify-result"))
    # the page's check refuses an edited die, naming the roll, as `yahtzee verify-game` does
    gid = page.url.rsplit("/", 1)[-1]
    record = page.request.post(f"{server.url}/api/games/{gid}", data={}).json()["dice"]
    from yahtzee_env.game.fair_dice import verify_record

    assert verify_record(record).ok
    record["rolls"][6]["dice"][0] = record["rolls"][6]["dice"][0] % 6 + 1
    verdict = page.evaluate(CHECK, [record])
    assert verdict["ok"] is False and verdict["key"] == "dice.check_roll"
    assert verdict["params"]["n"] == 7 == verify_record(record).roll
    record["seed"] = "00" * 32
    assert page.evaluate(CHECK, [record])["key"] == "dice.check_commitment"
    # My statistics: the faces rolled against fair dice, in words
    page.goto(f"{server.url}/stats?pace=0")
    page.wait_for_selector(tid("roll-test"))
    counts = [
        int(page.text_content(f"{tid('roll-faces')} td[data-face='{f}']")) for f in range(1, 7)
    ]
    assert sum(counts) >= 13 * 5
    p = float(page.get_attribute(tid("roll-test"), "data-p"))
    words = page.text_content(tid("roll-test"))
    assert "Chi-square" in words and ("nothing here suggests" in words) == (p >= 0.05)
