"""The cost of a move (issue 33): what the storage asks of the database for one move and the
CPU moves after it, counted by the storage itself (`storage.Trips`), on both backends; and
the optimistic commit's fall-back when another process moved the table on."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")


def trips_of(client, code, token, action, state, act):
    """The reply to the move (made from ``state``), and the storage's counts of what it
    asked for it."""
    trips = client.app.state.service.storage.trips
    before = trips.snapshot()
    reply = act(client, code, 0, token, action, state=state)
    return reply, trips.since(before)


def test_a_move_and_its_cpu_moves_are_one_transaction_of_two_statements(
    client, new_table, act, db
):
    """A score (the CPU seat then plays its whole turn) and a re-roll: each one transaction
    of at most two statements (the table's row, the log's rows), no read first; on
    PostgreSQL two round trips (BEGIN and the statements pipelined, then COMMIT)."""
    code, tokens, state = new_table(client, ("human", "medium"))
    seq = state["seq"]
    roll = {"type": "roll", "hold": [0]}
    reply, rolled = trips_of(client, code, tokens["0"], roll, state, act)
    assert reply.status_code == 200, reply.text
    now = reply.json()
    box = max(now["options"], key=now["options"].get)
    reply, score = trips_of(client, code, tokens["0"], {"type": "score", "box": box}, now, act)
    assert reply.status_code == 200, reply.text
    after = reply.json()
    assert after["seq"] > seq + 2  # the CPU's turn was played and logged with the move
    postgres = str(db).startswith("postgresql")
    for spent in (rolled, score):
        assert spent["transactions"] == 1, spent
        assert spent["statements"] <= 2, spent
        # SQLite: BEGIN, the two statements, COMMIT; PostgreSQL: two waits for an answer
        assert spent["round_trips"] <= (2 if postgres else 4), spent


def test_a_refused_move_asks_the_database_nothing(client, new_table, act):
    """A stale move (409) is refused from the copy in memory: no transaction at all."""
    code, tokens, state = new_table(client, ("human", "easy"))
    trips = client.app.state.service.storage.trips
    before = trips.snapshot()
    reply = act(client, code, 0, tokens["0"], {"type": "roll", "hold": []}, seq=state["seq"] + 5)
    assert reply.status_code == 409
    assert reply.json()["code"] == "stale_seq"
    if not client.app.state.service.storage.multi_process:
        assert trips.since(before)["transactions"] == 0


@pytest.mark.backends("postgresql")
def test_a_stale_copy_falls_back_to_the_locked_path(db, new_table, act):
    """Two servers on one database, B with no socket on the table (so it does not follow
    A's moves): the same move sent to A and then to B, whose copy is one move behind (it
    would accept it), is applied once; B's optimistic commit is refused by the row's rev
    and, under the lock, B sees the move was made (409 stale_seq). A move from A's newer
    state, sent to B, is applied there."""
    from starlette.testclient import TestClient

    from yahtzee_env.web.app import create_app

    with TestClient(create_app(db)) as a, TestClient(create_app(db)) as b:
        code, tokens, state = new_table(a, ("human", "medium"))
        assert b.get(f"/api/tables/{code}").status_code == 200  # B's copy, at the start
        roll = {"type": "roll", "hold": [0]}
        reply = act(a, code, 0, tokens["0"], roll, state=state)
        assert reply.status_code == 200
        now = reply.json()
        assert b.app.state.service.tables.loaded[code].rev < now["rev"]  # B is behind
        twice = act(b, code, 0, tokens["0"], roll, state=state)
        assert twice.status_code == 409 and twice.json()["code"] == "stale_seq", twice.text
        assert a.get(f"/api/tables/{code}").json()["seq"] == now["seq"]  # applied once
        box = max(now["options"], key=now["options"].get)
        reply = act(b, code, 0, tokens["0"], {"type": "score", "box": box}, state=now)
        assert reply.status_code == 200, reply.text
        assert reply.json()["seq"] > now["seq"]
        assert a.get(f"/api/tables/{code}").json()["seq"] == reply.json()["seq"]
