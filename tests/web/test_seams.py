"""Issue 46's seams on the server: a turn-based table is never deleted while its clock runs,
and how long each kind of table is kept (docs/web.md, "When a table goes")."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("httpx", reason="TestClient needs httpx")

from starlette.testclient import TestClient

from yahtzee_env.web.app import create_app
from yahtzee_env.web.limits import Limits

HOUR, DAY = 3600.0, 86_400.0
BOTH = pytest.mark.backends("sqlite", "postgresql")


def online_table(client, turn_timer: int):
    """A started online table of two people (the host at seat 0, a friend at seat 1)."""
    reply = client.post(
        "/api/tables",
        json={"seats": ["human", "friend"], "online": True, "turn_timer": turn_timer},
    )
    assert reply.status_code == 200, reply.text
    code, host = reply.json()["code"], reply.json()["tokens"]["0"]
    guest = client.post(f"/api/tables/{code}/join", json={"name": "Gina"}).json()["token"]
    assert client.post(f"/api/tables/{code}/start", json={"seat": 0, "token": host}).is_success
    return code, host, guest


def sweep(client) -> list[str]:
    return client.portal.call(client.app.state.service.sweep)["expired"]


def tick(client) -> list[str]:
    return client.portal.call(client.app.state.service.tick)


def state_of(client, code):
    reply = client.get(f"/api/tables/{code}")
    assert reply.status_code == 200, reply.text
    return reply.json()


def move(client, code, seat, token):
    """The seat scores its best-paying box (a whole turn in one decision)."""
    options = state_of(client, code)["options"]
    box = max(options, key=options.get)
    seq = state_of(client, code)["seq"]
    reply = client.post(
        f"/api/tables/{code}/act",
        json={"seat": seat, "token": token, "seq": seq, "action": {"type": "score", "box": box}},
    )
    assert reply.status_code == 200, reply.text
    return reply.json()


@BOTH
def test_a_one_day_table_idle_for_13_hours_is_kept(db, clock):
    with TestClient(create_app(db, clock=clock)) as c:
        code, host, _guest = online_table(c, turn_timer=int(DAY))
        move(c, code, 0, host)  # the host moved; the guest has a day
        clock.now += 13 * HOUR
        assert sweep(c) == [] and tick(c) == []
        state = state_of(c, code)
        assert state["current"] == 1 and not state["over"]
        assert state["deadline"] == pytest.approx(clock.now + 11 * HOUR, abs=5)


@BOTH
def test_past_its_deadline_the_computer_plays_the_turn_and_the_table_stays(db, clock):
    """Past the deadline the computer plays the late turn (the seat is away) and the clock
    passes to the next player; when every person is away the table pauses, and it goes
    only after the clock times its people without a move (two days for a 1-day table of
    two), never at the 12-hour abandon time."""
    with TestClient(create_app(db, clock=clock)) as c:
        code, host, guest = online_table(c, turn_timer=int(DAY))
        move(c, code, 0, host)
        clock.now += 25 * HOUR  # the guest let the day pass
        assert tick(c) == [code]
        state = state_of(c, code)
        assert state["seats"][1]["away"] == "timeout" and state["current"] == 0
        assert state["deadline"] == pytest.approx(clock.now + DAY, abs=5)
        assert sweep(c) == []
        clock.now += 25 * HOUR  # the host lets it pass too: nobody is left, the table pauses
        assert tick(c) == [code]
        state = state_of(c, code)
        assert state["deadline"] is None and not state["over"]
        clock.now += 13 * HOUR  # past the abandon time, not past 2 x the clock: kept
        assert sweep(c) == []
        assert state_of(c, code)["seats"][0]["away"] == "timeout"
        clock.now += 2 * DAY  # two whole clocks without a move: it goes
        assert sweep(c) == [code]
        assert c.get(f"/api/tables/{code}").status_code == 404


@BOTH
def test_how_long_each_kind_of_table_is_kept(db, clock, new_table, play_out):
    """The rules docs/web.md states: a table never started goes after a day, an unfinished
    game against the computer after a week, an online game without a clock 12 hours after
    its last move, a finished one after 30 days."""
    limits = Limits()
    assert limits.expire_unstarted_s == DAY and limits.expire_solo_s == 7 * DAY
    assert limits.expire_abandoned_s == 12 * HOUR and limits.expire_idle_s == 30 * DAY
    with TestClient(create_app(db, clock=clock)) as c:
        solo, _, _ = new_table(c)
        done, done_tokens, _ = new_table(c)
        play_out(c, done, done_tokens["0"])
        live, _host, _guest = online_table(c, turn_timer=0)
        clock.now += 13 * HOUR
        assert sweep(c) == [live]
        clock.now += 6 * DAY + 12 * HOUR  # a week and an hour
        assert sweep(c) == [solo]
        clock.now += 24 * DAY
        assert sweep(c) == [done]
