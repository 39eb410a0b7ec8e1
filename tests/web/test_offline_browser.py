"""Yatzy without a server, in Chromium (issue 50): installable; after a first visit the page
opens with the network off, plays a solo game against ``hard`` to the end in the page,
keeps an unfinished game over a reload, and once back online its finished game shows in My
statistics, marked offline. Online, with Play in this page chosen, a solo game runs in the
page too, and the server only records it."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("playwright.sync_api", reason="needs playwright (dev extra)")

from browsing import more_options, tid

TIMEOUT_MS = 20_000


def score_a_box(page) -> None:
    """Score the open box that pays most (select it, then press it again)."""
    page.wait_for_selector('button[data-testid^="box-0-"]:not([disabled])')
    old = page.get_attribute("#table", "data-version")
    boxes = page.query_selector_all('button[data-testid^="box-0-"]')
    best = max(boxes, key=lambda b: int(b.get_attribute("data-points")))
    selector = tid(best.get_attribute("data-testid"))
    page.click(selector)
    page.click(selector)
    page.wait_for_function(
        "old => document.querySelector('#table').dataset.version !== old", arg=old
    )


def filled(page) -> int:
    return page.evaluate(
        "() => [...document.querySelectorAll('[data-testid^=\"box-0-\"]')]"
        ".filter((b) => b.dataset.open === 'false').length"
    )


@pytest.fixture
def context(browser, tmp_path):
    """A Chromium profile on disk, as a player has (a fresh context is an incognito profile,
    where Chromium offers no install), with service workers allowed."""
    ctx = browser.browser_type.launch_persistent_context(
        str(tmp_path / "profile"),
        executable_path=os.environ.get("YAHTZEE_CHROMIUM", "/usr/bin/chromium"),
        args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        service_workers="allow",
        viewport={"width": 900, "height": 1100},
    )
    yield ctx
    ctx.close()


def test_installable_then_a_whole_game_offline_then_synced(context, shared_server):
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{shared_server.url}/?pace=0")
    # the first visit installs the worker, which caches the page, its modules and the levels
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    cdp = context.new_cdp_session(page)
    manifest = cdp.send("Page.getAppManifest")
    assert manifest.get("errors", []) == [], manifest["errors"]
    assert cdp.send("Page.getInstallabilityErrors")["installabilityErrors"] == []
    cdp.detach()
    assert page.is_hidden(tid("offline-banner"))

    context.set_offline(True)
    page.reload()
    page.wait_for_selector(f"{tid('offline-banner')}:not([hidden])")
    assert page.is_disabled(tid("create-online"))
    more_options(page)
    page.select_option(tid("seats"), "2")
    page.select_option(tid("seat-kind-1"), "hard")
    assert page.evaluate(
        "() => [...document.querySelectorAll('[data-testid=\"seat-kind-1\"] option')]"
        ".filter((o) => !o.disabled).map((o) => o.value)"
    ) == ["human", "easy", "medium", "hard", "expert"]  # the levels that play in the page
    page.fill(tid("name"), "Ada")
    page.click(tid("play"))
    page.wait_for_function("() => location.pathname === '/t/OFFLINE'")
    for _ in range(5):
        score_a_box(page)
    assert filled(page) == 5
    # an unfinished game survives a reload (IndexedDB), and the lobby offers it
    page.reload()
    page.wait_for_selector('button[data-testid^="box-0-"]:not([disabled])')
    assert filled(page) == 5
    page.goto(f"{shared_server.url}/?pace=0")
    page.wait_for_selector(f"{tid('resume-offline')}:not([hidden])")
    page.click(tid("resume-offline-button"))
    page.wait_for_function("() => location.pathname === '/t/OFFLINE'")
    while filled(page) < 13:
        score_a_box(page)
    page.wait_for_selector(f"{tid('result')}:not([hidden])")
    mine = int(page.text_content(tid("rank-total-0")))

    # back online: the finished game goes to the server, and My statistics shows it
    with page.expect_response("**/api/offline-games") as sent:
        context.set_offline(False)
    assert sent.value.status == 200
    assert len(sent.value.json()["stored"]) == 1
    page.goto(f"{shared_server.url}/stats")
    page.wait_for_selector(tid("played-offline"))
    # the page dealt its dice: its own row only, marked unverified (issue 57)
    assert page.text_content(f"{tid('stat-games')} b") == "0"
    assert "unverified" in page.text_content(tid("page-games-offline"))
    assert page.locator(tid("page-games-note")).is_visible()
    assert str(mine) in page.text_content(".recent")
    assert not errors, errors


def test_a_solo_game_online_played_in_the_page_is_only_recorded(page, shared_server):
    """Online, with Play in this page: no table on the server, no move sent to it; the
    finished game is one POST, and My statistics shows it marked as played in the page."""
    asked: list[str] = []
    page.on("request", lambda r: asked.append(f"{r.method} {r.url}") if "/api/" in r.url else None)
    page.goto(f"{shared_server.url}/?pace=0")
    more_options(page)
    page.fill(tid("name"), "Grace")
    page.select_option(tid("seats"), "2")
    page.select_option(tid("seat-kind-1"), "hard")
    assert page.get_attribute(tid("play"), "data-in-page") == "false"  # off by default
    page.check(tid("play-in-page"))
    assert page.get_attribute(tid("play"), "data-in-page") == "true"
    assert "in this page" in page.text_content(tid("play-what"))
    assert "Not rated" in page.text_content(tid("rated-note"))
    page.check(tid("coach"))  # the coach needs the server's table
    assert page.get_attribute(tid("play"), "data-in-page") == "false"
    page.uncheck(tid("coach"))
    page.click(tid("play"))
    page.wait_for_function("() => location.pathname === '/t/OFFLINE'")
    page.wait_for_selector(tid("in-page-note"))
    assert page.text_content(tid("table-code")) == "Played in this page"
    page.wait_for_selector(f"{tid('roll')}:not([disabled])")  # one roll, then a box each turn
    old = page.get_attribute("#table", "data-version")
    page.click(tid("roll"))
    page.wait_for_function(
        "old => document.querySelector('#table').dataset.version !== old", arg=old
    )
    with page.expect_response("**/api/offline-games") as sent:
        while filled(page) < 13:
            score_a_box(page)
        page.wait_for_selector(f"{tid('result')}:not([hidden])")
    assert sent.value.status == 200 and len(sent.value.json()["stored"]) == 1
    assert sent.value.request.post_data_json["games"][0]["played"] == "in_page"
    mine = int(page.text_content(tid("rank-total-0")))
    assert not [a for a in asked if "/api/tables" in a], asked  # the server dealt nothing
    page.goto(f"{shared_server.url}/stats")
    page.wait_for_selector(tid("played-in-page"))
    assert page.text_content(f"{tid('stat-games')} b") == "0"  # its own row only (issue 57)
    assert str(mine) in page.text_content(".recent")
    assert "in the page (unverified" in page.text_content(tid("page-games-in_page"))
