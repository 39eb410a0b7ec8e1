"""The web game's API through Starlette's TestClient: games, online tables, resume, stats,
coach, and every kind of bad input (issue 11), on both storage backends: SQLite and a real
PostgreSQL server (issue 20; the ``postgres_server`` fixture in conftest.py)."""

from __future__ import annotations

import json
import sqlite3

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("httpx", reason="TestClient needs httpx")

from replay import replay_row
from starlette.testclient import TestClient

from yahtzee_env.web.door.app import create_app
from yahtzee_env.web.errors import CODE_ALPHABET, CODE_LENGTH
from yahtzee_env.web.limits import Limits
from yahtzee_env.web.storage import SCHEMA_VERSION, SQLiteStorage, open_storage


def replay_totals(db, code):
    """The engine's totals for a stored table: replay the logged actions from its seed, its
    dice secret, its dice derivation and the seats' client seeds (issues 49, 58)."""
    storage = open_storage(db, migrate=False)
    row = storage.tables.load_table(code)
    storage.close()
    return replay_row(row)


# ------------------------------------------------------------------ playing
def test_solo_game_against_two_cpus_matches_the_engine(client, db, new_table, play_out):
    code, tokens, state = new_table(client, seats=("human", "hard", "easy"))
    assert len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET)
    assert state["started"] and state["current"] == 0  # the CPUs before seat 0 have moved
    assert all(e["seat"] != 0 for e in state["events"])
    final = play_out(client, code, tokens["0"], state=state)
    assert final["result"]["totals"] == [c["total"] for c in final["cards"]]
    assert final["result"]["totals"] == replay_totals(db, code)
    assert all(None not in c["scores"].values() for c in final["cards"])


def test_cpu_moves_are_narrated(client, new_table, act, roll_first):
    code, tokens, state = new_table(client, seats=("human", "hard"))
    roll_first(client, code, 0, tokens["0"], state)
    state = act(client, code, 0, tokens["0"], {"type": "score", "box": "chance"}).json()
    texts = [e["text"] for e in state["events"] if e["seat"] == 1]
    assert texts and texts[-1].startswith("hard scores ")
    assert all(t.startswith("hard ") for t in texts)
    rolls = [e for e in state["events"] if e["seat"] == 1 and e["type"] == "roll"]
    for e in rolls:  # "hard keeps 5 5 5, re-rolls 2 dice: ..." with the kept positions
        kept = [e["dice_before"][i] for i in e["kept"]]
        if 0 < len(kept) < 5:
            assert f"keeps {' '.join(map(str, kept))}, re-rolls {5 - len(kept)} di" in e["text"]


def test_held_dice_stay_held_after_a_roll(client, new_table, act, roll_first):
    code, tokens, state = new_table(client, seats=("human", "easy"))
    state = roll_first(client, code, 0, tokens["0"], state)
    dice = state["dice"]
    state = act(client, code, 0, tokens["0"], {"type": "roll", "hold": [3, 4]}).json()
    kept = sorted(dice[3:])
    assert sorted(state["dice"][i] for i in state["held"]) == kept
    assert state["rolls_left"] == 1


def test_potential_points_come_from_the_engine(client, new_table, roll_first):
    code, tokens, state = new_table(client, seats=("human", "easy"))
    state = roll_first(client, code, 0, tokens["0"], state)
    dice = state["dice"]
    assert state["options"]["chance"] == sum(dice)
    assert state["options"]["aces"] == dice.count(1)


def test_resume_after_restart_has_the_same_dice(db, new_table, act, play_out, roll_first):
    with TestClient(create_app(db)) as c:
        code, tokens, state = new_table(c, seats=("human", "hard", "easy"))
        state = roll_first(c, code, 0, tokens["0"], state)
        state = act(c, code, 0, tokens["0"], {"type": "roll", "hold": [0, 1]}).json()
        state = act(c, code, 0, tokens["0"], {"type": "score", "box": "chance"}).json()
    with TestClient(create_app(db)) as c:  # a new server process over the same file
        again = c.get(f"/api/tables/{code}").json()
        for key in ("dice", "rolls_left", "current", "cards", "held", "seq"):
            assert again[key] == state[key], key
        final = play_out(c, code, tokens["0"], state=again)
    assert final["result"]["totals"] == replay_totals(db, code)


def test_best_of_five_and_play_again(db, new_table, act, play_out, roll_first):
    with TestClient(create_app(db)) as c:
        code, tokens, state = new_table(c, seats=("human", "greedy"), match=True)
        state = play_out(c, code, tokens["0"], state=state)
        assert state["match_state"]["games"] == [state["result"]["totals"]]
        nxt = act(c, code, 0, tokens["0"], {"type": "next"}).json()
        assert nxt["game"] == 1 and not nxt["over"]
        assert nxt["first"] == (state["first"] + 1) % 2  # the start passes on in a match
        assert act(c, code, 0, tokens["0"], {"type": "next"}).status_code == 409
        nxt = roll_first(c, code, 0, tokens["0"], nxt)
        nxt = act(c, code, 0, tokens["0"], {"type": "roll", "hold": [2]}).json()
    with TestClient(create_app(db)) as c:  # the second game resumes too
        again = c.get(f"/api/tables/{code}").json()
        for key in ("game", "first", "dice", "rolls_left", "cards", "match_state"):
            assert again[key] == nxt[key], key


def test_statistics_split_by_opponents_and_mode(client, new_table, play_out):
    player = client.post("/api/players", json={"name": "Ada"}).json()
    code, tokens, state = new_table(client, seats=("human", "easy"), player=player["token"])
    final = play_out(client, code, tokens["0"], state=state)
    stats = client.post("/api/stats", json={"player": player["token"]}).json()
    assert stats["name"] == "Ada"
    assert stats["overall"]["games"] == 1
    assert stats["overall"]["best_score"] == final["result"]["totals"][0]
    assert stats["by_opponents"]["easy"]["games"] == 1
    assert stats["by_mode"]["solo"]["games"] == 1 and stats["by_mode"]["online"]["games"] == 0
    assert [h["score"] for h in stats["history"]] == [final["result"]["totals"][0]]


@pytest.mark.backends("sqlite")
def test_schema_is_versioned_and_wal(db):
    SQLiteStorage(db).close()
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    con.commit()
    con.close()
    from yahtzee_env.web.storage import SchemaError

    with pytest.raises(SchemaError, match="newer"):
        SQLiteStorage(db)


# ------------------------------------------------------------------ online tables
def test_online_table_join_start_and_turns(client, new_table, act, roll_first):
    code, tokens, state = new_table(client, seats=("human", "friend", "friend"), online=True)
    assert not state["started"]
    join = client.post(f"/api/tables/{code}/join", json={"name": "Bea"})
    assert join.status_code == 200
    friend = join.json()
    assert friend["seat"] == 1
    # only the host starts; the free seat goes to the fill level
    assert (
        client.post(
            f"/api/tables/{code}/start", json={"seat": 1, "token": friend["token"]}
        ).status_code
        == 403
    )
    state = client.post(f"/api/tables/{code}/start", json={"seat": 0, "token": tokens["0"]}).json()
    assert state["started"] and state["seats"][2]["kind"] == "cpu"
    assert client.post(f"/api/tables/{code}/join", json={"name": "Cy"}).status_code == 409
    mover = state["current"]
    other = 1 - mover if mover in (0, 1) else 0
    token = {0: tokens["0"], 1: friend["token"]}
    wrong = act(client, code, other, token[other], {"type": "score", "box": "chance"})
    assert wrong.status_code == 409 and "not your turn" in wrong.json()["error"]
    forged = act(client, code, mover, token[other], {"type": "score", "box": "chance"})
    assert forged.status_code == 403 and "token" in forged.json()["error"]
    roll_first(client, code, mover, token[mover])
    assert (
        act(client, code, mover, token[mover], {"type": "score", "box": "chance"}).status_code
        == 200
    )


def test_websocket_pushes_moves_to_other_players(client, new_table, roll_first):
    code, tokens, _state = new_table(client, seats=("human", "friend"), online=True)
    friend = client.post(f"/api/tables/{code}/join", json={"name": "Bea"}).json()
    client.post(f"/api/tables/{code}/start", json={"seat": 0, "token": tokens["0"]})
    token = {0: tokens["0"], 1: friend["token"]}
    with client.websocket_connect(f"/ws/{code}") as a, client.websocket_connect(f"/ws/{code}") as b:
        start = a.receive_json()["state"]
        b.receive_json()
        mover = start["current"]
        assert start["cup"] and start["dice"] == []  # the mover's first roll: its tap
        start = roll_first(client, code, mover, token[mover], start)
        assert a.receive_json()["state"]["dice"] == start["dice"]
        assert b.receive_json()["state"]["dice"] == start["dice"]
        a.send_json(
            {
                "type": "act",
                "id": 7,
                "seq": start["seq"],
                "seat": mover,
                "token": token[mover],
                "action": {"type": "score", "box": "chance"},
            }
        )
        ack = a.receive_json()
        assert ack["type"] == "ack" and ack["id"] == 7
        pushed = b.receive_json()
        assert pushed["type"] == "state" and pushed["state"]["current"] == 1 - mover
        assert pushed["state"]["cards"][mover]["scores"]["chance"] == sum(start["dice"])


def test_websocket_rate_limit(db, new_table):
    with TestClient(create_app(db, limits=Limits(rate=5, burst=10))) as c:
        code, _tokens, _ = new_table(c, seats=("human", "easy"))
        with c.websocket_connect(f"/ws/{code}") as ws:
            ws.receive_json()
            for i in range(30):
                ws.send_json({"type": "ping", "id": i})
            replies = [ws.receive_json() for _ in range(30)]
        limited = [r for r in replies if r["type"] == "error"]
        assert limited and all(r["status"] == 429 for r in limited)
        # the address's bucket (10) also paid for the table's creation and the handshake
        assert sum(r["type"] == "pong" for r in replies) >= 8


def test_http_rate_limit(db):
    with TestClient(create_app(db, limits=Limits(rate=1, burst=5))) as c:
        codes = [c.post("/api/players", json={"name": "x"}).status_code for _ in range(12)]
        assert codes[:5] == [200] * 5 and 429 in codes


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ("{not json", 400, "malformed JSON"),
        ("[1, 2]", 400, "must be an object"),
        (json.dumps({"seats": ["human"]}), 400, "2 to 4"),
        (json.dumps({"seats": ["human", "wizard"]}), 400, "unknown kind"),
        (json.dumps({"seats": ["hard", "human"]}), 400, "seat 0"),
        (json.dumps({"seats": ["human", "friend"]}), 400, "online"),
        (json.dumps({"seats": ["human", "easy"], "rules": "chess"}), 400, "unknown rules"),
        (json.dumps({"seats": ["human", "easy"], "name": "<script>x</script>"}), 400, "markup"),
        (json.dumps({"seats": ["human", "easy"], "name": "x" * 40}), 400, "longer"),
        (json.dumps({"seats": ["human", "easy"], "player": "forged"}), 403, "player token"),
        ("x" * 10_000, 413, "too large"),
    ],
)
def test_bad_table_requests(client, db, body, status, words):
    reply = client.post("/api/tables", content=body, headers={"Content-Type": "application/json"})
    assert reply.status_code == status
    assert words in reply.json()["error"]
    storage = open_storage(db, migrate=False)
    assert storage.tables.count_tables() == 0  # nothing stored
    storage.close()


def test_unknown_table(client):
    for code in ("ABCDEFGH", "nope", "AAAA-AAAA"):
        reply = client.get(f"/api/tables/{code}")
        assert reply.status_code == 404 and "no table" in reply.json()["error"]
    with client.websocket_connect("/ws/ABCDEFGH") as ws:
        assert ws.receive_json()["status"] == 404


@pytest.mark.parametrize(
    ("action", "status", "words"),
    [
        ({"type": "roll", "hold": [0, 0]}, 400, "illegal hold"),
        ({"type": "roll", "hold": [7]}, 400, "illegal hold"),
        ({"type": "roll", "hold": "01"}, 400, "list"),
        ({"type": "roll", "hold": [0, 1, 2, 3, 4]}, 400, "all five"),
        ({"type": "score", "box": "sevens"}, 400, "unknown box"),
        ({"type": "dance"}, 400, "unknown action"),
        ("roll", 400, "must be an object"),
        ({"type": "next"}, 409, "still on"),
    ],
)
def test_illegal_actions_change_nothing(client, db, action, status, words, new_table, act):
    code, tokens, state = new_table(client, seats=("human", "easy"))
    reply = act(client, code, 0, tokens["0"], action)
    assert reply.status_code == status and words in reply.json()["error"]
    assert client.get(f"/api/tables/{code}").json()["version"] == state["version"]


def test_filled_box_and_spent_rolls_are_refused(client, new_table, act, roll_first):
    code, tokens, _state = new_table(client, seats=("human", "easy"))
    token = tokens["0"]
    roll_first(client, code, 0, token)
    act(client, code, 0, token, {"type": "roll", "hold": []})
    act(client, code, 0, token, {"type": "roll", "hold": []})
    reply = act(client, code, 0, token, {"type": "roll", "hold": []})
    assert reply.status_code == 409 and "no rolls left" in reply.json()["error"]
    act(client, code, 0, token, {"type": "score", "box": "chance"})
    roll_first(client, code, 0, token)  # the next turn's dice out of the cup
    reply = act(client, code, 0, token, {"type": "score", "box": "chance"})
    assert reply.status_code == 409 and "already filled" in reply.json()["error"]


def test_stale_and_forged_seat_tokens(client, new_table, act):
    code, tokens, _ = new_table(client, seats=("human", "easy"))
    other, _, _ = new_table(client, seats=("human", "easy"))
    for seat, token, status in [
        (0, "forged", 403),
        (0, None, 403),
        (1, tokens["0"], 403),  # a CPU seat has no token
        (5, tokens["0"], 400),
        ("0", tokens["0"], 400),
    ]:
        reply = act(client, code, seat, token, {"type": "score", "box": "chance"})
        assert reply.status_code == status, (seat, token)
    # a token of another table is stale here
    reply = act(client, other, 0, tokens["0"], {"type": "score", "box": "chance"})
    assert reply.status_code == 403


def test_names_are_plain_text(client, new_table):
    _code, _tokens, state = new_table(client, seats=("human", "easy"), name='Bo & "Al"')
    assert state["seats"][0]["name"] == 'Bo & "Al"'


# ------------------------------------------------------------------ coach
def test_coach_hint_and_regret(client, new_table, act, play_out, roll_first):
    code, tokens, state = new_table(client, seats=("human", "easy"), coach=True)
    state = roll_first(client, code, 0, tokens["0"], state)
    hint = client.post(f"/api/tables/{code}/hint", json={"seat": 0, "token": tokens["0"]}).json()
    options = hint["options"]
    assert 1 < len(options) <= 4
    values = [o["expected_total"] for o in options]
    assert values == sorted(values, reverse=True)
    best = options[0]["action"]
    action = (
        {"type": "score", "box": options[0]["label"].removeprefix("score ").replace(" ", "_")}
        if best >= 32
        else {"type": "roll", "hold": [i for i in range(5) if best >> i & 1]}
    )
    state = act(client, code, 0, tokens["0"], action).json()
    mine = [e for e in state["events"] if e["seat"] == 0]
    assert mine[-1]["regret"] == pytest.approx(0.0, abs=1e-4)  # (the first roll: ungraded)
    final = play_out(client, code, tokens["0"], state=state)
    review = final["review"]["0"]
    assert review["total_regret"] == pytest.approx(final["regret"]["0"], abs=1e-3)
    assert review["total_regret"] > 0
    costs = [d["regret"] for d in review["costliest"]]
    assert len(costs) == 3 and costs == sorted(costs, reverse=True)


def test_hint_needs_the_coach(client, new_table):
    code, tokens, _ = new_table(client, seats=("human", "easy"))
    reply = client.post(f"/api/tables/{code}/hint", json={"seat": 0, "token": tokens["0"]})
    assert reply.status_code == 409 and "coach is off" in reply.json()["error"]


def test_the_config_says_what_the_server_enforces(client):
    """The lobby's figures (`/api/config`) are those the table creation holds to: the
    seat counts and turn timers at their bounds, the levels as seat kinds, the fill level
    nobody chose (the page writes none of them itself)."""
    config = client.get("/api/config").json()
    low, high = config["min_seats"], config["max_seats"]

    def create(**body):
        return client.post("/api/tables", json={"seats": ["human", "easy"], **body})

    for n, ok in ((low - 1, False), (low, True), (high, True), (high + 1, False)):
        reply = create(seats=["human"] + ["easy"] * (n - 1))
        assert (reply.status_code == 200) == ok, (n, reply.text)
    first, last = config["turn_timer_range"]
    timers = [(t, True) for t in config["turn_timers"]] + [(first - 1, False), (last + 1, False)]
    for timer, ok in [*timers, (first, True), (last, True)]:
        reply = create(seats=["human", "friend"], online=True, turn_timer=timer)
        assert (reply.status_code == 200) == ok, (timer, reply.text)
    online = create(seats=["human", "friend"], online=True).json()["state"]
    assert online["turn_timer"] == config["turn_timer_online"]
    assert set(config["main_levels"]) <= set(config["levels"])
    for level in config["levels"]:
        assert create(seats=["human", level]).status_code == 200, level
    assert create().json()["state"]["fill"] == config["fill"] in config["levels"]
