"""Tournaments (issue 62) in Chromium against ``yahtzee serve``: four accounts and four CPU
places play a knockout to its winner while a third browser (a phone, in English) watches
the bracket update by itself; the creator's page (a desktop, in Italian) shows the list,
the form and the bracket. The people's matches are played through the API (quick), the
CPU matches by the server.

Set ``YAHTZEE_SCREENSHOTS=docs/img/screens`` to write the screenshots there."""

from __future__ import annotations

from browsing import DESKTOP, PHONE, new_player, shot, tid
from test_tournaments import play_table
from visitors import read, served_account

from yahtzee_env.web.people.accounts import SESSION_COOKIE


def test_four_accounts_and_four_cpus_play_to_the_winner_as_a_third_browser_watches(
    browser, server, tmp_path
):
    people = [served_account(server.url, n) for n in ("ann_t", "bob_t", "cyd_t", "dee_t")]
    ann = people[0]
    # the creator's page, a desktop in Italian: the list and the form
    a_ctx, mine, a_errors = new_player(browser, DESKTOP, "it-IT")
    w_ctx, watcher, w_errors = new_player(browser, PHONE, "en-US")
    try:
        a_ctx.add_cookies(
            [{"name": SESSION_COOKIE, "value": ann.cookies[SESSION_COOKIE], "url": server.url}]
        )
        mine.goto(f"{server.url}/tournaments?lang=it")
        mine.wait_for_selector(tid("tourney-form"))
        mine.fill(tid("tourney-name"), "Coppa del venerdì")
        mine.select_option(tid("tourney-places"), "8")
        mine.select_option(tid("tourney-fill"), "greedy")
        mine.click(tid("tourney-create"))
        mine.wait_for_selector(f"{tid('tourney-status')}[data-state=open]")
        assert "/tournaments/" in mine.url
        code = mine.url.rstrip("/").rsplit("/", 1)[1]
        for c in people[1:]:
            assert c.post(f"/api/tournaments/{code}/join", json={}).status_code == 200
        mine.reload()
        mine.wait_for_selector(f"{tid('tourney-status')}:has-text('4 posti su 8')")
        shot(mine, tmp_path, "tourney-open-1280x800-it")
        # the third browser: a guest on a phone, watching
        watcher.goto(f"{server.url}/tournaments/{code}?lang=en")
        watcher.wait_for_selector(f"{tid('tourney-status')}[data-state=open]")
        watcher.wait_for_selector(tid("tourney-sign-in"))
        mine.click(tid("tourney-start-now"))  # the creator starts it: CPUs fill four places
        watcher.wait_for_selector(f"{tid('tourney-status')}[data-state=running]")
        watcher.wait_for_selector(tid("tourney-round-1"))
        shot(watcher, tmp_path, "tourney-round1-390x844-en")
        for rnd in (1, 2, 3):
            bracket = read(ann, f"/api/tournaments/{code}")
            if bracket["state"] == "over":
                break
            for m in bracket["rounds"][-1]["matches"]:
                if m["table"] and m["winner"] is None:
                    play_table(people, m["table"])
            if rnd < 3:  # the bracket moves on by itself on the watching phone
                watcher.wait_for_selector(tid(f"tourney-round-{rnd + 1}"))
        watcher.wait_for_selector(f"{tid('tourney-status')}[data-state=over]", timeout=30_000)
        assert "Winner:" in watcher.text_content(tid("tourney-status"))
        assert watcher.locator('[data-testid^="tourney-match-"]').count() == 7
        shot(watcher, tmp_path, "tourney-over-390x844-en")
        mine.wait_for_selector(f"{tid('tourney-status')}[data-state=over]", timeout=30_000)
        assert "Vincitore:" in mine.text_content(tid("tourney-status"))
        shot(mine, tmp_path, "tourney-over-1280x800-it")
        mine.goto(f"{server.url}/tournaments?lang=it")
        mine.wait_for_selector(tid("tourney-form"))
        shot(mine, tmp_path, "tourney-list-1280x800-it")
        watcher.set_viewport_size(DESKTOP)
        watcher.goto(f"{server.url}/tournaments/{code}?lang=en")
        watcher.wait_for_selector(f"{tid('tourney-status')}[data-state=over]")
        shot(watcher, tmp_path, "tourney-over-1280x800-en")
        assert not a_errors and not w_errors, a_errors + w_errors
    finally:
        a_ctx.close()
        w_ctx.close()
        for c in people:
            c.close()
