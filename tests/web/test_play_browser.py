"""A place to play (issue 32) in a real headless Chromium, two or three browser contexts on
one ``yahtzee serve``: two strangers matched within the wait (a phone and a desktop), a
rating that moves after a rated game and the leaderboard, an open table joined with one
tap, and a spectator who sees a move live and cannot act; English and Italian.

Set ``YAHTZEE_SCREENSHOTS=docs/img/screens`` to write the screenshots of docs/web.md there (they
are always taken into the test's temporary folder).
"""

from __future__ import annotations

import pytest
from browsing import more_options, score_best, shot, tid, wait_my_dice

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("uvicorn", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("openskill", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("playwright.sync_api", reason="needs playwright (dev extra)")

PHONE = (390, 844, True)
DESKTOP = (1280, 800, False)


def lobby(page, url: str, name: str) -> None:
    page.goto(f"{url}/?pace=0")
    page.wait_for_selector(f"{tid('quick-seats')} option", state="attached")
    page.fill(tid("name"), name)


def version(page) -> str:
    return page.get_attribute("#table", "data-version")


def test_two_strangers_are_matched_within_the_wait(open_page, server, tmp_path):
    ann = open_page(*DESKTOP[:2], DESKTOP[2], "en-US")
    bea = open_page(*PHONE[:2], PHONE[2], "it-IT")
    lobby(ann, server.url, "Ann")
    more_options(ann)
    ann.select_option(tid("quick-seats"), "2")
    ann.select_option(tid("quick-wait"), "120")
    ann.click(tid("quick-match"))
    status = ann.locator(f"{tid('quick-match-status')}[data-state='waiting']")
    status.wait_for()
    assert "1 of 2" in status.inner_text() and "s left" in status.inner_text()
    first = status.inner_text()
    ann.wait_for_function(  # the wait counts down in view
        "old => document.querySelector('[data-testid=quick-match-status]').textContent !== old",
        arg=first,
    )
    assert ann.locator(tid("quick-match-cancel")).is_visible()
    shot(ann, tmp_path, "quick-match-1280x800-en")
    lobby(bea, server.url, "Bea")
    assert bea.text_content(f"{tid('quick-match')} > span") == "Partita rapida"
    more_options(bea)
    bea.select_option(tid("quick-seats"), "2")
    bea.select_option(tid("quick-wait"), "120")
    bea.click(tid("quick-match"))
    for page in (ann, bea):
        page.wait_for_url("**/t/*")
        page.wait_for_selector("#table[data-version]")
    code = ann.text_content(tid("table-code"))
    assert bea.text_content(tid("table-code")) == code
    header = ann.locator("#card thead").inner_text()
    assert "Ann" in header and "Bea" in header
    shot(bea, tmp_path, "quick-matched-390x844-it")


def test_cancelling_a_quick_match(open_page, server, tmp_path):
    page = open_page(*PHONE)
    lobby(page, server.url, "Cy")
    page.click(tid("quick-match"))
    page.locator(f"{tid('quick-match-status')}[data-state='waiting']").wait_for()
    page.locator(tid("quick-match-status")).scroll_into_view_if_needed()
    shot(page, tmp_path, "quick-match-390x844-en")
    page.click(tid("quick-match-cancel"))
    page.locator(f"{tid('quick-match-status')}[data-state='cancelled']").wait_for()
    assert page.locator(tid("quick-match")).is_visible()
    # nothing of the request is kept: a reload finds the lobby idle
    page.reload()
    page.wait_for_selector(f"{tid('quick-seats')} option", state="attached")
    page.wait_for_timeout(300)
    assert page.get_attribute(tid("quick-match-status"), "data-state") in (None, "idle")


def test_a_rating_moves_after_a_rated_game(open_page, server, tmp_path):
    page = open_page(*DESKTOP)
    lobby(page, server.url, "Rita")
    page.fill(tid("signup-name"), "rita")
    page.fill(tid("signup-password"), "correct horse battery")
    page.click(tid("signup"))
    page.wait_for_selector(f"{tid('rating')}:has-text('Rating')")
    before = page.text_content(tid("rating"))
    assert "1000?" in before and "provisional" in before
    more_options(page)
    page.select_option(tid("seats"), "2")
    page.select_option(tid("seat-kind-1"), "easy")
    page.click(tid("play"))
    wait_my_dice(page)
    for _ in range(13):
        score_best(page)
    page.wait_for_selector(f"{tid('result')}:not([hidden])")
    page.click(tid("back-to-lobby"))
    page.wait_for_selector(f"{tid('rating')}:has-text('1 of 10')")
    after = page.text_content(tid("rating"))
    assert after != before
    page.click(tid("leaderboard-link"))
    page.wait_for_selector(tid("board-row-1"))
    row = page.text_content(tid("board-row-1"))
    assert "rita" in row
    assert "place: 1" in page.text_content(tid("board-me"))
    assert "hard ≈" in page.text_content(tid("board-cpu"))
    shot(page, tmp_path, "leaderboard-1280x800-en")


def test_an_open_table_is_joined_with_one_tap(open_page, server, tmp_path):
    host = open_page(*DESKTOP)
    lobby(host, server.url, "Hal")
    more_options(host)
    host.select_option(tid("seats"), "3")
    host.select_option(tid("seat-kind-1"), "friend")
    host.select_option(tid("seat-kind-2"), "friend")
    host.check(tid("list-open"))
    host.click(tid("create-online"))
    host.wait_for_selector("#waiting:not([hidden])")
    code = host.text_content(tid("table-code"))
    guest = open_page(*PHONE)
    lobby(guest, server.url, "Gus")
    row = guest.locator(tid(f"listed-{code}"))
    row.wait_for()
    assert "Hal" in row.inner_text() and "2 of 3 seats free" in row.inner_text()
    row.scroll_into_view_if_needed()
    shot(guest, tmp_path, "open-tables-390x844-en")
    row.locator(tid(f"join-open-{code}")).click()
    guest.wait_for_url(f"**/t/{code}*")
    guest.wait_for_selector("#waiting-seats:has-text('Gus')")
    host.wait_for_selector("#waiting-seats:has-text('Gus')")


def test_a_spectator_sees_a_move_and_cannot_act(open_page, server, tmp_path):
    host = open_page(*DESKTOP)
    lobby(host, server.url, "Hana")
    more_options(host)
    host.select_option(tid("seats"), "2")
    host.select_option(tid("seat-kind-1"), "easy")
    host.click(tid("play"))
    wait_my_dice(host)
    code = host.text_content(tid("table-code"))
    host.click(tid("watch-toggle"))
    link = host.locator(f"{tid('watch-link')}:visible")
    link.wait_for()
    url = link.get_attribute("href")
    assert "/w/" in url and code not in url
    watcher = open_page(*PHONE, "it-IT")
    watcher.goto(url + "?pace=0")
    watcher.wait_for_selector("#table[data-version]")
    assert watcher.locator(tid("spectating")).is_visible()
    assert code not in watcher.content()
    host.wait_for_selector(f"{tid('spectators')}:has-text('1 watching')")
    # a move of the host reaches the spectator live
    score_best(host)
    filled = host.locator('td[data-testid^="box-0-"][data-open="false"]').first
    box = filled.get_attribute("data-testid")
    watcher.wait_for_selector(f'{tid(box)}[data-open="false"]')
    # and the spectator cannot act: no box to choose, the dice and Roll disabled
    assert watcher.locator('button[data-testid^="box-"]').count() == 0
    assert watcher.locator(tid("roll")).is_disabled()
    assert watcher.locator(tid("die-0")).is_disabled()
    shot(watcher, tmp_path, "spectator-390x844-it")
    shot(host, tmp_path, "watch-link-1280x800-en")
    # the host turns the link off: the spectator's page no longer follows the table
    host.click(tid("watch-toggle"))
    host.wait_for_selector(f"{tid('spectators')}", state="hidden")
