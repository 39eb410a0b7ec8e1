"""The time bank (issue 62, item 5) in a real headless Chromium, on a phone first (390x844)
and at 1280x800, in Italian and English: the lobby's Time bank choice (presets from the
server; a bank folds the fixed clock away) makes the table, and the table's clock shows the
mover's bank counting down with what each turn adds. The bank's arithmetic is tested at the
server, on a clock the test moves (test_time_bank.py).

Set ``YAHTZEE_SCREENSHOTS=docs/img/screens`` to write the screenshots there too."""

from __future__ import annotations

import re

import pytest
from browsing import LANGS, more_options, served_page, shot, tid

httpx = served_page()

PRESET = {"en": "+0:21 a turn, max 2:03", "it": "+0:21 a turno, max 2:03"}
# the timer's box, and whether it is cut, out of the window or over the code or turn line
TIMER_FITS = """() => {
  const box = (id) => document.querySelector(`[data-testid="${id}"]`).getBoundingClientRect();
  const t = box("timer"), node = document.querySelector('[data-testid="timer"]');
  const over = ["table-code", "turn"].filter((id) => {
    const r = box(id);
    return Math.min(r.right, t.right) - Math.max(r.left, t.left) > 1
      && Math.min(r.bottom, t.bottom) - Math.max(r.top, t.top) > 1;
  });
  return { over, cut: node.scrollWidth > node.clientWidth + 1,
           inside: t.left >= 0 && t.right <= innerWidth + .5 && t.top >= 0 };
}"""


@pytest.mark.parametrize(
    ("width", "height", "lang"),
    [(390, 844, "it"), (390, 844, "en"), (1280, 800, "it"), (1280, 800, "en")],
)
def test_the_lobby_offers_a_time_bank_and_the_clock_shows_it(
    open_page, shared_server, tmp_path, width, height, lang
):
    url = shared_server.url
    page = open_page(width, height, width < 1000, LANGS[lang])
    page.goto(f"{url}/?pace=0")
    page.wait_for_selector(f"{tid('play-what')}:not(:empty)")
    more_options(page)
    options = page.eval_on_selector(
        tid("time-bank"), "s => [...s.options].map((o) => [o.value, o.textContent])"
    )
    config = page.request.get(f"{url}/api/config").json()
    assert [v for v, _ in options] == [""] + [f"{a}:{c}" for a, c in config["time_banks"]]
    assert dict(options)["21:123"] == PRESET[lang]
    assert page.locator(tid("turn-timer")).is_visible()  # the fixed clock, by default
    page.fill(tid("name"), "Tess")
    page.select_option(tid("seats"), "2")
    page.select_option(tid("seat-kind-1"), "friend")
    page.select_option(tid("time-bank"), "21:123")
    assert page.locator(tid("turn-timer")).is_hidden()  # the bank replaces it
    page.locator(tid("time-bank")).scroll_into_view_if_needed()
    shot(page, tmp_path, f"time-bank-lobby-{width}x{height}-{lang}")
    page.click(tid("create-online"))
    page.wait_for_selector(f"{tid('table-code')}:not(:empty)")
    code = page.text_content(tid("table-code"))
    state = page.request.get(f"{url}/api/tables/{code}").json()
    assert state["time_bank"] == {"add": 21, "cap": 123} and state["turn_timer"] == 123
    # a friend joins over the API (another client), the host starts on the page
    joined = httpx.post(f"{url}/api/tables/{code}/join", json={"name": "Gina"}).json()
    assert joined["seat"] == 1
    page.wait_for_selector(f"{tid('start')}:not([disabled])")
    page.click(tid("start"))
    page.wait_for_selector(f"{tid('timer')}[data-bank='true']:not([hidden])")
    left = page.text_content(tid("timer-bank-left"))
    assert re.fullmatch(r"2:0[0-3]|1:5\d", left), left  # the full bank, 2:03, running
    assert page.text_content(tid("timer-bank-add")) == "+0:21"
    assert PRESET[lang] in page.get_attribute(tid("timer"), "title")
    page.wait_for_function(
        "(was) => document.querySelector('[data-testid=timer-bank-left]').textContent !== was",
        arg=left,
    )  # it counts down
    fits = page.evaluate(TIMER_FITS)
    assert fits == {"over": [], "cut": False, "inside": True}, fits
    shot(page, tmp_path, f"time-bank-clock-{width}x{height}-{lang}")
    # remembered: the next visit offers the same bank
    page.goto(f"{url}/?pace=0")
    more_options(page)
    assert page.input_value(tid("time-bank")) == "21:123"
