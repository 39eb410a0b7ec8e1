"""Yatzy without a server, in Chromium (issue 50): installable; after a first visit the page
opens with the network off, plays a solo game against ``hard`` to the end in the page,
keeps an unfinished game over a reload, and once back online its finished game shows in My
statistics, marked offline. Online, with Play in this page chosen, a solo game runs in the
page too, and the server only records it.

Issue 57: none of it hangs on ``navigator.onLine``. With the server stopped and the browser
"online", the page opens from the service worker, says the server can't be reached, plays
the game in the page and sends it once when a server answers again on the same database; a
Play that gets no answer plays in the page at once, or offers a level the page plays; one
connection banner at a time; the lobby's name survives a reload."""

from __future__ import annotations

import os
import sqlite3

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("playwright.sync_api", reason="needs playwright (dev extra)")

from browsing import more_options, roll_first, tid, wait_my_dice

TIMEOUT_MS = 20_000


def score_a_box(page) -> None:
    """Score the open box that pays most (select it, then press it again), after the tap on
    Roll that brings the turn's first roll out of the cup (the page's game too, issue 58)."""
    wait_my_dice(page)
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


def banners(page) -> list[str]:
    """The connection banners shown now (issue 57: one at a time)."""
    return page.evaluate(
        "() => ['connection', 'offline-banner'].filter((id) => !document.getElementById(id).hidden)"
    )


def go_offline(context, page, url: str) -> str:
    """The browser offline for a new navigation to ``url``, whatever this Chromium build keeps
    of Playwright's ``set_offline`` over a navigation (Chromium 150 dropped it at a reload):
    the emulation on, and every request to the server aborted too (``context.route``: the
    page's and the service worker's). The page then says it is offline (``navigator.onLine``
    false) or that the server can't be reached (the emulation gone): either way it plays.
    Answers which (``browser`` or ``server``)."""
    context.set_offline(True)
    context.route(f"{url}/**", lambda route: route.abort("internetdisconnected"))
    page.goto(f"{url}/?pace=0")
    page.wait_for_selector(f"{tid('offline-banner')}:not([hidden])")
    why = page.evaluate("() => document.documentElement.dataset.offlineWhy")
    offline = page.evaluate("() => navigator.onLine === false")
    assert why == ("browser" if offline else "server"), (why, offline)
    return why


def go_online(context, url: str) -> None:
    context.unroute(f"{url}/**")
    context.set_offline(False)


def offline_results(db) -> list[tuple]:
    """The games played in the page that the server stored (``results.offline`` > 0)."""
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT player_id, code, score FROM results WHERE offline > 0"
        ).fetchall()


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

    why = go_offline(context, page, shared_server.url)
    words = {"browser": "You are offline", "server": "The server can't be reached"}[why]
    assert page.text_content(tid("offline-banner")).startswith(words)
    assert banners(page) == ["offline-banner"]
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
    page.wait_for_selector("#tray[data-cup=true]")  # the sixth turn's dice, still in the cup
    assert filled(page) == 5
    page.goto(f"{shared_server.url}/?pace=0")  # the same way offline (the routes abort it)
    page.wait_for_selector(f"{tid('resume-offline')}:not([hidden])")
    page.click(tid("resume-offline-button"))
    page.wait_for_function("() => location.pathname === '/t/OFFLINE'")
    while filled(page) < 13:
        score_a_box(page)
    page.wait_for_selector(f"{tid('result')}:not([hidden])")
    mine = int(page.text_content(tid("rank-total-0")))

    assert banners(page) == ["offline-banner"]
    # back online: the finished game goes to the server (at the browser's "online" event, or
    # when /healthz answers again), and My statistics shows it
    with page.expect_response("**/api/offline-games") as sent:
        go_online(context, shared_server.url)
    assert sent.value.status == 200
    assert len(sent.value.json()["stored"]) == 1
    page.wait_for_selector(tid("offline-banner"), state="hidden")
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
    assert roll_first(page)  # the first roll: the dice out of the cup
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


def test_the_server_stopped_a_game_in_the_page_then_synced_once(context, server):
    """Issue 57: the server stopped, the network up (``navigator.onLine`` stays true): the
    page reloads from the service worker, says the server can't be reached (one banner),
    plays a solo game against hard to its end in the page; a server started again on the same
    port and database gets the game once (one POST, one stored row), and the banner goes."""
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    posts: list[str] = []
    page.on(
        "request",
        lambda r: (
            posts.append(r.url) if r.method == "POST" and "/api/offline-games" in r.url else None
        ),
    )
    page.goto(f"{server.url}/?pace=0")
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    page.wait_for_selector(f"{tid('play')}:not([disabled])")
    server.kill()  # SIGKILL, as a crash

    page.reload()
    page.wait_for_selector(f"{tid('offline-banner')}:not([hidden])")
    assert page.evaluate("() => navigator.onLine") is True  # the browser thinks it is online
    assert banners(page) == ["offline-banner"]
    assert page.text_content(tid("offline-banner")).startswith("The server can't be reached")
    assert page.is_disabled(tid("create-online"))
    more_options(page)
    page.select_option(tid("seats"), "2")
    page.select_option(tid("seat-kind-1"), "hard")
    page.fill(tid("name"), "Ada")
    page.click(tid("play"))
    page.wait_for_function("() => location.pathname === '/t/OFFLINE'")
    assert banners(page) == ["offline-banner"]
    assert "you are playing in this page" in page.text_content(tid("offline-banner"))
    assert "recorded when the server is back" in page.text_content(tid("offline-banner"))
    while filled(page) < 13:
        score_a_box(page)
    page.wait_for_selector(f"{tid('result')}:not([hidden])")
    mine = int(page.text_content(tid("rank-total-0")))
    assert posts == []  # nothing sent to a server that is not there

    server.start()  # the same port, the same database: the page asks /healthz every 3 s
    with page.expect_response("**/api/offline-games", timeout=30_000) as sent:
        page.wait_for_selector(tid("offline-banner"), state="hidden", timeout=30_000)
    assert sent.value.status == 200 and len(sent.value.json()["stored"]) == 1
    assert banners(page) == []
    # once: a reload and the lobby (which sends what is left) send nothing more
    page.goto(f"{server.url}/?pace=0")
    page.wait_for_selector(f"{tid('play')}:not([disabled])")
    page.wait_for_timeout(1500)
    assert len(posts) == 1, posts
    stored = offline_results(server.db)
    assert len(stored) == 1 and stored[0][2] == mine, stored
    assert not errors, errors


def test_a_play_with_no_answer_plays_here_or_offers_a_level_the_page_plays(context, server):
    """Issue 57: the lobby drawn (the levels cached), then the server gone. Play against
    master (which only the server plays) says so and offers the strongest level the page
    plays; taking the offer plays in the page at once; back on the lobby Play against medium
    plays in the page with no question. One banner all along."""
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{server.url}/?pace=0")
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    more_options(page)
    page.fill(tid("name"), "Grace")
    page.select_option(tid("seats"), "2")
    page.select_option(tid("seat-kind-1"), "master")
    page.wait_for_selector(f"{tid('play')}:not([disabled])")
    server.kill()
    page.click(tid("play"))
    page.wait_for_selector(f"{tid('lobby-offer')}:not([hidden])")
    assert "only the server plays master" in page.text_content(tid("lobby-error"))
    assert page.text_content(tid("play-here-instead")) == "Play against expert in this page"
    assert banners(page) == ["offline-banner"]
    assert page.text_content(tid("offline-banner")).startswith("The server can't be reached")
    assert page.is_disabled(tid("create-online")) and not page.is_disabled(tid("play"))
    page.click(tid("play-here-instead"))
    page.wait_for_function("() => location.pathname === '/t/OFFLINE'")
    wait_my_dice(page)  # the first roll out of the cup, on the tap
    assert page.evaluate(
        "async () => (await (await import('/static/js/net.js')).api('/api/tables/OFFLINE'))"
        ".seats.map((s) => s.level || s.kind)"
    ) == ["human", "expert"]
    assert banners(page) == ["offline-banner"]
    # the lobby again: an unfinished game is offered; medium plays here at once
    page.evaluate(
        "() => { history.pushState({}, '', '/?pace=0'); dispatchEvent(new Event('popstate')); }"
    )
    page.wait_for_selector(f"{tid('resume-offline')}:not([hidden])")
    page.select_option(tid("seat-kind-1"), "medium")
    page.click(tid("play"))
    page.wait_for_function("() => location.pathname === '/t/OFFLINE'")
    wait_my_dice(page)  # the first roll out of the cup, on the tap
    assert page.evaluate(
        "async () => (await (await import('/static/js/net.js')).api('/api/tables/OFFLINE'))"
        ".seats.map((s) => s.level || s.kind)"
    ) == ["human", "medium"]
    assert banners(page) == ["offline-banner"]
    assert not errors, errors


def test_one_connection_banner_at_a_time(page, shared_server):
    """Issue 57: a request that fails while the browser is offline (or the server out of
    reach) would show "Connection lost" over "You are offline": one banner shows, the one
    that says why; back online, neither."""
    page.goto(f"{shared_server.url}/?pace=0")
    page.wait_for_selector(f"{tid('play')}:not([disabled])")
    ask = (
        "async () => { const net = await import('/static/js/net.js');"
        " try { await net.api('/api/me/tables'); } catch {} }"
    )
    # the lobby's own first requests answered first: one answered after the failure below
    # would rightly say the server answers again (a loaded machine's CI run saw "online")
    page.wait_for_load_state("networkidle")
    page.context.set_offline(True)  # no navigation: the emulation holds
    page.wait_for_selector(f"{tid('offline-banner')}:not([hidden])")
    page.evaluate(ask)  # fails: the connection banner would say "reconnecting"
    assert page.get_attribute(tid("connection"), "data-state") == "reconnecting"
    assert banners(page) == ["offline-banner"]
    assert page.text_content(tid("offline-banner")).startswith("You are offline")
    page.context.set_offline(False)
    page.wait_for_selector(tid("offline-banner"), state="hidden")
    page.evaluate(ask)
    assert banners(page) == []
    # the server out of reach (its requests fail), the browser online: the same one banner
    page.route("**/api/**", lambda route: route.abort("connectionrefused"))
    page.route("**/healthz", lambda route: route.abort("connectionrefused"))
    page.evaluate(ask)
    page.wait_for_selector(f"{tid('offline-banner')}:not([hidden])")
    assert banners(page) == ["offline-banner"]
    assert page.text_content(tid("offline-banner")).startswith("The server can't be reached")
    page.unroute("**/api/**")
    page.unroute("**/healthz")
    page.wait_for_selector(tid("offline-banner"), state="hidden")  # /healthz answers again
    assert banners(page) == []


def test_the_typed_name_survives_a_reload(page, shared_server):
    """Issue 57: a name typed in the lobby, with no game played yet, is there after a
    reload (the browser keeps it), and so it is with the server out of reach."""
    page.goto(f"{shared_server.url}/?pace=0")
    page.wait_for_selector(f"{tid('play')}:not([disabled])")
    page.fill(tid("name"), "Hypatia")
    page.reload()
    page.wait_for_function("() => document.getElementById('name').value === 'Hypatia'")
    page.fill(tid("name"), "Hypatia 2")
    page.route("**/api/session", lambda route: route.abort("connectionrefused"))
    page.reload()
    page.wait_for_function("() => document.getElementById('name').value === 'Hypatia 2'")
    page.wait_for_timeout(2000)  # the session's answer (none) changes nothing
    assert page.input_value(tid("name")) == "Hypatia 2"
