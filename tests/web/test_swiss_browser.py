"""A Swiss tournament (issue 62) in Chromium against ``yahtzee serve``: the creator's page
(a desktop, in Italian) creates it with the form's format, and a phone in English watches
its standings to the winner. The people's matches are played through the API (quick), the
CPU matches by the server.

Set ``YAHTZEE_SCREENSHOTS=docs/img/screens`` to write the screenshots there."""

from __future__ import annotations

from browsing import DESKTOP, PHONE, new_player, shot, tid
from test_tournaments import play_table
from visitors import read, served_account

from yahtzee_env.web.people.accounts import SESSION_COOKIE


def test_a_swiss_tournament_shows_its_standings_in_both_languages(browser, server, tmp_path):
    people = [served_account(server.url, n) for n in ("ann_s", "bob_s")]
    ann = people[0]
    a_ctx, mine, a_errors = new_player(browser, DESKTOP, "it-IT")
    w_ctx, watcher, w_errors = new_player(browser, PHONE, "en-US")
    try:
        a_ctx.add_cookies(
            [{"name": SESSION_COOKIE, "value": ann.cookies[SESSION_COOKIE], "url": server.url}]
        )
        mine.goto(f"{server.url}/tournaments?lang=it")
        mine.wait_for_selector(tid("tourney-form"))
        mine.fill(tid("tourney-name"), "Svizzera della domenica")
        mine.select_option(tid("tourney-format"), "swiss")
        mine.select_option(tid("tourney-places"), "4")
        mine.select_option(tid("tourney-fill"), "greedy")
        mine.click(tid("tourney-create"))
        mine.wait_for_selector(f"{tid('tourney-status')}[data-state=open]")
        code = mine.url.rstrip("/").rsplit("/", 1)[1]
        assert read(ann, f"/api/tournaments/{code}")["format"] == "swiss"
        assert "Sistema svizzero" in mine.text_content("#tourneys-body")
        assert people[1].post(f"/api/tournaments/{code}/join", json={}).status_code == 200
        mine.click(tid("tourney-start-now"))
        mine.wait_for_selector(tid("tourney-standings"))
        assert "Classifica" in mine.text_content(tid("tourney-standings"))
        watcher.goto(f"{server.url}/tournaments/{code}?lang=en")
        watcher.wait_for_selector(tid("tourney-standings"))
        for _ in range(2):  # 4 entrants: two rounds
            bracket = read(ann, f"/api/tournaments/{code}")
            for m in bracket["rounds"][-1]["matches"]:
                if m["table"] and m["winner"] is None:
                    play_table(people, m["table"])
        watcher.wait_for_selector(f"{tid('tourney-status')}[data-state=over]", timeout=30_000)
        final = read(ann, f"/api/tournaments/{code}")
        assert watcher.text_content(tid("tourney-standing-1")).startswith(
            "1" + final["standings"][0]["name"]
        )
        assert "Winner: " + final["winner"] in watcher.text_content(tid("tourney-status"))
        assert "Standings" in watcher.text_content(tid("tourney-standings"))
        shot(watcher, tmp_path, "tourney-swiss-390x844-en")
        mine.wait_for_selector(f"{tid('tourney-status')}[data-state=over]", timeout=30_000)
        shot(mine, tmp_path, "tourney-swiss-1280x800-it")
        assert not a_errors and not w_errors, a_errors + w_errors
    finally:
        a_ctx.close()
        w_ctx.close()
        for c in people:
            c.close()
