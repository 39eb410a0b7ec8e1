"""The browser tests' helpers, in one place: a page hook's selector (`tid`), a screenshot
(`shot`, copied to ``$YAHTZEE_SCREENSHOTS`` when set: ``docs/img/screens`` for docs/web.md), a
new person at the page (`new_player`: a browser context of its own, its page, the page's
errors), an account signed up on the page (`sign_up`), the screens and languages the tests
use (`PHONE`, `DESKTOP`, `LANGS`) and the skip of a module that drives a served page
(`served_page`), and the wait for the server's state of a table (`table_when`)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

TIMEOUT_MS = 20_000  # what a page waits for at most (the fixtures' pages too)
SHOTS = os.environ.get("YAHTZEE_SCREENSHOTS")
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
LANGS = {"it": "it-IT", "en": "en-US"}  # the page's languages, a browser locale of each
PASSWORD = "correct horse battery"


def served_page():
    """Skip the module where ``yahtzee serve`` and Chromium cannot be driven (the web extra
    and Playwright); else the httpx module, for the test's own requests to the server."""
    pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
    pytest.importorskip("uvicorn", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
    pytest.importorskip("playwright.sync_api", reason="needs playwright (dev extra)")
    return pytest.importorskip("httpx")


def table_when(page, url: str, code: str, check, timeout_s: float = TIMEOUT_MS / 1000) -> dict:
    """The server's state of table ``code`` once ``check(state)`` holds, read over the page's
    own connection every 0.2 s (a 429 read again); AssertionError with the last state after
    ``timeout_s``. (Not `page.wait_for_function` over a ``fetch``: it does not await a
    promise, which is truthy, so such a wait returns at once.)"""
    deadline = time.monotonic() + timeout_s
    while True:
        reply = page.request.get(f"{url}/api/tables/{code}")
        state = reply.json() if reply.status == 200 else None
        if state is not None and check(state):
            return state
        if time.monotonic() > deadline:
            raise AssertionError(f"table {code} never got there: {state}")
        time.sleep(0.2)


def tid(name: str) -> str:
    """The selector of the page's ``data-testid`` hook ``name``."""
    return f'[data-testid="{name}"]'


def more_options(page) -> None:
    """Open the lobby's More options (every choice but the name, Play, Quick match and the
    code), once the lobby has its choices."""
    page.wait_for_selector(tid("more-options"))
    if not page.evaluate("document.getElementById('more-options').open"):
        page.click(tid("more-options"))
    page.wait_for_selector(tid("seat-kind-1"))


def shot(page, tmp_path, name: str, min_bytes: int = 5_000) -> None:
    """A screenshot of ``page`` as ``name.png`` (at least ``min_bytes``: not blank)."""
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path))
    assert path.stat().st_size > min_bytes
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(SHOTS) / path.name)


def sign_up(page, url: str, lang: str, username: str, name: str | None = None) -> None:
    """Sign up to a new account ``username`` on the lobby at ``url`` in ``lang`` (the name
    ``name``, ``username.title()`` unless given), and set the recovery codes aside."""
    page.goto(f"{url}/?pace=0&lang={lang}")
    page.fill(tid("name"), name or username.title())
    page.fill(tid("signup-name"), username)
    page.fill(tid("signup-password"), PASSWORD)
    page.click(tid("signup"))
    page.wait_for_selector(f"{tid('account-name')}:has-text('{username}')")
    page.wait_for_selector(f"{tid('recovery-codes-done')}:visible")
    page.click(tid("recovery-codes-done"))


def new_player(browser, viewport=None, locale: str | None = None, init: str = ""):
    """A fresh browser context (its own cookies: another person or device), its page, and
    the list the page's errors go to. ``init``: a script run before the page's own."""
    options = {"viewport": viewport or {"width": 900, "height": 1000}}
    if locale is not None:
        options["locale"] = locale
    ctx = browser.new_context(**options)
    if init:
        ctx.add_init_script(init)
    pg = ctx.new_page()
    pg.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    return ctx, pg, errors


# The dice at rest: every die shows its value (a tumble flickers through faces) and none is
# still spinning (a spinning die's box overlaps its neighbours' while it turns).
SETTLED = """() => [...document.querySelectorAll('#dice > .die')].every((d) =>
  d.dataset.face === d.dataset.value
  && !d.getAnimations().some((a) => a.playState === 'running'))"""


def roll_first(page) -> bool:
    """A person's turn starts with the dice in the cup (issue 58, item 2): tap Roll where
    the tray says so (``data-cup``), and wait for the dice, settled; whether it rolled."""
    if page.get_attribute("#tray", "data-cup") != "true" or page.is_disabled(tid("roll")):
        return False
    old = page.get_attribute("#table", "data-version")
    page.click(tid("roll"))
    page.wait_for_function(
        "old => document.querySelector('#table').dataset.version !== old", arg=old
    )
    assert page.get_attribute("#tray", "data-cup") == "false"
    page.wait_for_function(SETTLED)
    return True


def wait_my_dice(page, seat: int = 0) -> None:
    """Wait for seat ``seat``'s turn with its dice down: where the turn starts with the dice
    in the cup (a person's, issue 58 item 2), tap Roll first (`roll_first`)."""
    page.wait_for_function(
        """seat => { const roll = document.querySelector('[data-testid=roll]');
          return (document.querySelector('#tray').dataset.cup === 'true' && !roll.disabled) ||
            document.querySelector(`button[data-testid^="box-${seat}-"]`) !== null; }""",
        arg=seat,
    )
    roll_first(page)
    page.wait_for_selector(f'button[data-testid^="box-{seat}-"]')


def score_best(page) -> None:
    """Seat 0 scores the box that pays most now (select, then score), after its first roll
    where its dice are still in the cup (`wait_my_dice`); waits for the next state."""
    wait_my_dice(page)
    boxes = page.query_selector_all('button[data-testid^="box-0-"]')
    best = max(boxes, key=lambda b: int(b.get_attribute("data-points")))
    selector = tid(best.get_attribute("data-testid"))
    old = page.get_attribute("#table", "data-version")
    page.click(selector)
    page.click(selector)
    page.wait_for_function(
        "old => document.querySelector('#table').dataset.version !== old", arg=old
    )


def card_ids(page, seats: int) -> list[str]:
    """The hooks of an online table's card, totals, dice and head that must fit one screen."""
    names = page.evaluate(
        "[...document.querySelectorAll('#card tbody [data-testid^=\"box-0-\"]')]"
        ".map((n) => n.dataset.testid.slice(6))"
    )
    assert len(names) == 13
    ids = [f"box-{s}-{b}" for s in range(seats) for b in names]
    ids += [f"{k}-{s}" for s in range(seats) for k in ("upper", "bonus", "ybonus", "total")]
    return ids + [f"die-{i}" for i in range(5)] + ["roll", "score", "table-code", "turn"]


_TAP = """([name, closest]) => {
  const node = document.querySelector(`[data-testid="${name}"]`);
  const r = node && node.getBoundingClientRect();
  if (!r || !r.width || !r.height) return null;
  const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
  const owner = hit && hit.closest(closest);
  const box = { x: r.x, y: r.y, width: r.width, height: r.height };
  return { hit: owner ? owner.dataset.testid || "" : "", ...box };
}"""


def tap_target(page, name: str, closest: str = "[data-testid]") -> dict:
    """Where the hook ``name`` is and what a tap at its centre lands on (``hit``: the testid of
    the nearest ``closest`` ancestor), measured in one step inside the page, so a re-render
    between measuring and asking (a socket's state) cannot leave a detached element; waits
    until the hook is on the page with a size."""
    return page.wait_for_function(_TAP, arg=[name, closest]).json_value()
