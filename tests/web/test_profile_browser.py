"""Profiles (issue 62) in Chromium against ``yahtzee serve``: an account's profile on a
phone (390x844) and a desktop (1280x800), in Italian and English, shows the rating chart and
an achievement earned in the games played; its owner hides it and a stranger then reads "no
profile"; the leaderboard's names open the profiles.

Set ``YAHTZEE_SCREENSHOTS=docs/img/screens`` to keep the screenshots."""

from __future__ import annotations

import contextlib

import pytest
from browsing import DESKTOP, PHONE, new_player, shot, tid
from test_profiles import play_out
from visitors import send, served_account

from yahtzee_env.web.people.accounts import SESSION_COOKIE

SIZES = {"phone": PHONE, "desktop": DESKTOP}


@pytest.fixture(scope="module")
def ada(shared_server):
    """Account ``ada`` on the shared server with six games played, or more until one
    earned an achievement: her session cookie."""
    with contextlib.closing(served_account(shared_server.url, "ada")) as c:
        for games in range(1, 31):  # a few games at least: a chart with a line
            r = send(c, "/api/tables", {"seats": ["human", "easy"]})  # the session's budget
            assert r.status_code == 200, r.text
            play_out(c, r.json()["code"])
            got = c.get("/api/profiles/ada").json()["achievements"]
            if games >= 6 and any(a["earned"] for a in got):
                break
        assert any(a["earned"] for a in got)
        return c.cookies[SESSION_COOKIE]


def as_ada(browser, server, cookie, viewport, locale):
    ctx, pg, errors = new_player(browser, viewport, locale)
    ctx.add_cookies([{"name": SESSION_COOKIE, "value": cookie, "url": server.url}])
    return ctx, pg, errors


@pytest.mark.parametrize("size", ["phone", "desktop"])
@pytest.mark.parametrize("lang", ["en", "it"])
def test_a_profile_shows_the_rating_chart_and_an_earned_achievement(
    browser, shared_server, ada, tmp_path, size, lang
):
    ctx, pg, errors = as_ada(browser, shared_server, ada, SIZES[size], f"{lang}-IT")
    pg.goto(f"{shared_server.url}/p/ada?lang={lang}")
    pg.wait_for_selector(tid("profile-chart"))
    assert pg.locator(f"{tid('profile-chart')} circle").count() >= 1
    earned = pg.locator('[data-testid^="achievement-"][data-earned="true"]')
    assert earned.count() >= 1
    assert pg.locator(tid("profile-visibility")).is_visible()  # the owner's choice
    assert pg.locator(tid("profile-review-link")).count() >= 1  # the owner's view
    title = pg.text_content("#profile-title")
    assert title == ("Profilo di ada" if lang == "it" else "ada’s profile")
    width = pg.evaluate("document.documentElement.scrollWidth")
    assert width <= SIZES[size]["width"], f"the page scrolls sideways: {width}px"
    dims = "{width}x{height}".format(**SIZES[size])
    shot(pg, tmp_path, f"profile-{dims}-{lang}")
    pg.locator(tid("achievements")).scroll_into_view_if_needed()
    shot(pg, tmp_path, f"profile-achievements-{dims}-{lang}")
    ctx.close()
    assert not errors, errors


def test_the_owner_hides_the_profile_and_a_stranger_reads_no_profile(
    browser, shared_server, ada, tmp_path
):
    ctx, pg, errors = as_ada(browser, shared_server, ada, SIZES["phone"], "en-US")
    other, stranger, errors2 = new_player(browser, SIZES["phone"], "en-US")
    stranger.goto(f"{shared_server.url}/leaderboard?lang=en")
    stranger.click(tid("board-profile-1"))
    stranger.wait_for_selector(tid("profile-chart"))
    assert stranger.locator(tid("profile-visibility")).count() == 0  # not the owner
    assert stranger.locator(tid("profile-review-link")).count() == 0  # no table's code
    pg.goto(f"{shared_server.url}/p/ada?lang=en")
    pg.wait_for_selector(tid("profile-visibility"))
    pg.select_option(tid("profile-visibility"), "nobody")
    pg.wait_for_function(
        "() => document.querySelector('[data-testid=profile-visibility-note]').textContent"
    )
    assert "Only you" in pg.text_content(tid("profile-visibility-note"))
    stranger.goto(f"{shared_server.url}/p/ada?lang=en")
    stranger.wait_for_selector(tid("profile-error"))
    assert stranger.text_content(tid("profile-error")) == (
        "There is no profile to show for that name."
    )
    shot(stranger, tmp_path, "profile-hidden-390x844-en", min_bytes=2_000)
    pg.select_option(tid("profile-visibility"), "public")
    pg.wait_for_function(
        "() => document.querySelector('[data-testid=profile-visibility-note]').textContent"
        ".includes('Everyone')"
    )
    ctx.close()
    other.close()
    assert not errors and not errors2, errors + errors2
