"""Friends and invitations (issue 62) in Chromium, end to end against ``yahtzee serve``:
two accounts follow each other (one from the lobby on a phone, in English; the other from
a desktop, in Italian), one invites the other by name to a friends-only table, the notice
shows in the invitee's lobby, the invitation is accepted and they play.

Set ``YAHTZEE_SCREENSHOTS=docs/img/screens`` to write the screenshots there."""

from __future__ import annotations

from browsing import DESKTOP, PHONE, more_options, new_player, score_best, shot, sign_up, tid


def follow(page, username):
    page.fill(tid("friend-name"), username)
    page.click(tid("follow"))
    page.wait_for_selector(tid(f"friend-{username}"))


def test_two_friends_follow_each_other_one_invites_the_other_and_they_play(
    browser, server, tmp_path
):
    a_ctx, ann, a_errors = new_player(browser, PHONE, "en-US")
    b_ctx, bob, b_errors = new_player(browser, DESKTOP, "it-IT")
    try:
        sign_up(ann, server.url, "en", "ann_f")
        sign_up(bob, server.url, "it", "bob_f")
        # an unknown name says so, in the page's language
        ann.fill(tid("friend-name"), "nobody_here")
        ann.click(tid("follow"))
        ann.wait_for_selector(f"{tid('friends-error')}:has-text('nobody_here')")
        follow(ann, "bob_f")
        assert "follow you back" in ann.text_content(tid("friend-status-bob_f"))
        follow(bob, "ann_f")
        bob.wait_for_selector(f"{tid('friend-status-ann_f')}:has-text('Amico')")
        # ann's lobby, asked again, shows her friend online and the counts
        ann.goto(f"{server.url}/?pace=0&lang=en")
        ann.wait_for_selector(f"{tid('friend-status-bob_f')}:has-text('online now')")
        ann.wait_for_selector(f"{tid('lobby-now')}:has-text('2 people online now')")
        assert "0 waiting in quick match" in ann.text_content(tid("lobby-now"))
        ann.locator(tid("friends-list")).scroll_into_view_if_needed()
        shot(ann, tmp_path, "friends-lobby-390x844-en")
        # ann hosts a table for friends only and invites bob by name
        more_options(ann)
        ann.select_option(tid("seats"), "2")
        ann.select_option(tid("seat-kind-1"), "friend")
        ann.click(tid("create-online"))
        ann.wait_for_selector(f"{tid('table-code')}:not(:empty)")
        code = ann.text_content(tid("table-code"))
        ann.wait_for_selector(f"{tid('invite-name')}:visible")
        ann.check(tid("friends-only"))
        ann.fill(tid("invite-name"), "bob_f")
        ann.click(tid("invite"))
        ann.wait_for_selector(f"{tid('invite-said')}:has-text('bob_f')")
        assert ann.is_checked(tid("friends-only"))
        ann.locator(tid("invite-box")).scroll_into_view_if_needed()
        shot(ann, tmp_path, "friends-invite-390x844-en")
        # bob's lobby shows the invitation (the page asks when it opens); he accepts
        bob.goto(f"{server.url}/?pace=0&lang=it")
        bob.wait_for_selector(f"{tid(f'invite-{code}')}:has-text('ann_f')")
        shot(bob, tmp_path, "friends-notice-1280x800-it")
        bob.click(tid(f"invite-accept-{code}"))
        bob.wait_for_selector(f"{tid('table-code')}:has-text('{code}')")
        ann.wait_for_selector(f'{tid("seat-status-1")}[data-connected="true"]')
        ann.click(tid("start"))
        for pg in (ann, bob):
            pg.wait_for_selector("#board:not([hidden])")
        # they play: ann scores her first turn, and it is bob's move on both pages
        score_best(ann)
        bob.wait_for_selector('[data-testid="turn"][data-seat="1"]')
        assert bob.is_hidden(tid(f"invite-{code}"))
        # the table's people: Follow on a seat (bob follows ann already: it says so)
        bob.click(tid("follow-seat-0"))
        bob.wait_for_selector(f"{tid('follow-seat-0')}:has-text('Lo segui')")
        # on a phone, in Italian: bob's lobby shows ann at the table they play at
        bob.set_viewport_size(PHONE)
        bob.goto(f"{server.url}/?pace=0&lang=it")
        bob.wait_for_selector(f"{tid('friends-list')}:has-text('gioca al tavoliere {code}')")
        bob.locator(tid("friends-list")).scroll_into_view_if_needed()
        shot(bob, tmp_path, "friends-lobby-390x844-it")
        assert not a_errors and not b_errors, (a_errors, b_errors)
    finally:
        a_ctx.close()
        b_ctx.close()


def test_a_leaderboard_row_offers_follow(browser, server, tmp_path):
    """Follow from the leaderboard: an account's page offers Follow on the other accounts'
    rows (the board's rows are stood in by the test: rating a game takes a whole game)."""
    import json

    b_ctx, bob, b_errors = new_player(browser, PHONE, "en-US")
    a_ctx, ann, a_errors = new_player(browser, DESKTOP, "it-IT")
    try:
        sign_up(bob, server.url, "en", "bob_b")
        sign_up(ann, server.url, "it", "ann_b")
        board = {
            "top": [
                {
                    "place": 1,
                    "name": "bob_b",
                    "rating": 1040,
                    "games": 3,
                    "provisional": True,
                    "me": False,
                    "provisional_games": 10,
                },
                {
                    "place": 2,
                    "name": "ann_b",
                    "rating": 1000,
                    "games": 2,
                    "provisional": True,
                    "me": True,
                    "provisional_games": 10,
                },
            ],
            "me": None,
            "cpu": [],
            "provisional_games": 10,
        }
        ann.route(
            "**/api/leaderboard",
            lambda route: route.fulfill(content_type="application/json", body=json.dumps(board)),
        )
        ann.goto(f"{server.url}/leaderboard?lang=it")
        ann.wait_for_selector(tid("follow-bob_b"))
        assert ann.locator(tid("follow-ann_b")).count() == 0  # not on one's own row
        ann.click(tid("follow-bob_b"))
        ann.wait_for_selector(f"{tid('follow-bob_b')}:has-text('Lo segui')")
        shot(ann, tmp_path, "friends-leaderboard-1280x800-it")
        following = ann.context.request.get(f"{server.url}/api/friends").json()["following"]
        assert [f["name"] for f in following] == ["bob_b"]
        assert not a_errors and not b_errors, (a_errors, b_errors)
    finally:
        a_ctx.close()
        b_ctx.close()
