"""Issue 49 on the server: each game's dice committed before the first roll and revealed in
its review (``yahtzee verify-game`` checks the record), never leaked before the end, tables
stored before the commitment, and duplicate tables."""

from __future__ import annotations

import copy
import json
import logging
import re
import sqlite3

import pytest
from visitors import send, send_seed

from yahtzee_env.game.fair_dice import (
    DEFAULT_CLIENT_SEED,
    DICE_V2,
    FOLLOWS,
    client_seed_mark,
    commitment,
    roll_values,
    roll_values_v2,
    verify_record,
)
from yahtzee_env.web.tables.deal import game_dice_seed

SQLITE = pytest.mark.backends("sqlite")
HEX64 = re.compile(r"^[0-9a-f]{64}$")


def review(client, gid, **body):
    reply = send(client, f"/api/games/{gid}", body)
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_a_game_played_on_the_server_verifies_and_an_edited_die_is_refused(
    client, new_table, play_out, tmp_path
):
    code, tokens, state = new_table(client, seats=("human", "greedy"))
    committed = state["dice_commitment"]
    assert HEX64.match(committed) and state["duplicate"] is False
    final = play_out(client, code, tokens["0"], state=state)
    assert final["dice_commitment"] == committed
    r = review(client, final["result"]["game_id"], tokens=tokens)
    record = r["dice"]
    assert record["commitment"] == committed
    assert commitment(bytes.fromhex(record["seed"])) == committed
    verdict = verify_record(record)
    assert verdict.ok and verdict.message.startswith(FOLLOWS), verdict
    # the record's dice are the dice the review (and so the game) had
    dice_seen = [d["dice"] for t in r["turns"] for d in t["decisions"]]
    assert dice_seen[0] == record["rolls"][0]["dice"]
    # through the command, as a player would check it
    from yahtzee_env.commands.cli import main

    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    assert main(["verify-game", str(path)]) == 0
    edited = copy.deepcopy(record)
    edited["rolls"][9]["dice"][2] = edited["rolls"][9]["dice"][2] % 6 + 1
    path.write_text(json.dumps(edited))
    assert main(["verify-game", str(path)]) == 1
    verdict = verify_record(edited)
    assert not verdict.ok and verdict.roll == 10 and verdict.message.startswith("roll 10 ")


@SQLITE
def test_the_seed_never_leaks_before_the_end(client, app, new_table, act, caplog):
    """Nothing sent before the end (states, socket messages, the move log, errors, the
    spectator's view, the review's refusal) nor logged holds the secret or the game's seed."""
    caplog.set_level(logging.DEBUG)
    code, tokens, state = new_table(client, seats=("human", "easy"))
    table = app.state.service.tables.load(code)
    secret = table.dice_secret
    seed = game_dice_seed(secret, 0)
    secrets_hex = [secret.hex(), seed.hex(), secret.hex().upper(), seed.hex().upper()]
    seen: list[str] = [json.dumps(state)]
    watch = client.post(f"/api/tables/{code}/watch", json={"on": True, "token": tokens["0"]})
    assert watch.status_code == 200, watch.text
    seen.append(watch.text)
    watch_id = watch.json()["watch"]
    with client.websocket_connect(f"/ws/{code}") as ws:
        seen.append(json.dumps(ws.receive_json()))
        moves = 0
        while not state["over"] and moves < 12:
            if state.get("cup"):  # a person's turn starts with the dice in the cup
                reply = act(client, code, 0, tokens["0"], {"type": "roll", "hold": []})
            elif state["rolls_left"] == 2:
                reply = act(client, code, 0, tokens["0"], {"type": "roll", "hold": [0]})
            else:
                box = max(state["options"], key=state["options"].get)
                reply = act(client, code, 0, tokens["0"], {"type": "score", "box": box})
            seen.append(reply.text)
            state = reply.json()
            seen.append(json.dumps(ws.receive_json()))
            moves += 1
        # errors: a stale intent, a bad one, a review of the unfinished game
        seen.append(act(client, code, 0, tokens["0"], {"type": "roll"}, seq=0, game=0).text)
        seen.append(act(client, code, 0, tokens["0"], {"type": "nonsense"}).text)
        seen.append(client.post(f"/api/games/{code}-0", json={"tokens": tokens}).text)
    assert not state["over"]
    seen.append(client.get(f"/api/tables/{code}").text)
    seen.append(client.get(f"/api/tables/{code}/moves").text)
    spectator = client.get(f"/api/watch/{watch_id}").json()
    assert spectator["dice_commitment"] == state["dice_commitment"]
    seen.append(json.dumps(spectator))
    with client.websocket_connect(f"/ws/watch/{watch_id}") as ws:
        seen.append(json.dumps(ws.receive_json()))
    seen += [r.getMessage() for r in caplog.records]
    text = "\n".join(seen)
    assert state["dice_commitment"] in text
    for s in secrets_hex:
        assert s not in text
    # base64 forms too (a token-like encoding of the same bytes)
    import base64

    for raw in (secret, seed):
        assert base64.b64encode(raw).decode()[:20] not in text
        assert base64.urlsafe_b64encode(raw).decode()[:20] not in text


@SQLITE
def test_a_table_stored_before_the_commitment_plays_and_says_so(
    client, app, db, new_table, play_out
):
    code, tokens, _ = new_table(client, seats=("human", "greedy"))
    with sqlite3.connect(db) as con:  # as a table stored before migration 9 reads
        con.execute("UPDATE tables SET dice_secret = NULL WHERE code = ?", (code,))
    app.state.service.tables.loaded.pop(code, None)
    state = client.get(f"/api/tables/{code}").json()
    assert state["dice_commitment"] is None
    final = play_out(client, code, tokens["0"], state=state)
    r = review(client, final["result"]["game_id"], tokens=tokens)
    assert r["dice"] == {"predates": True}


def test_a_duplicate_table_gives_both_seats_the_same_dice(tmp_path, new_table, act, play_out):
    """Two seats playing the same moves on a duplicate table end with equal cards, and the
    review finds no turn where they parted; against greedy it names where they did."""
    from starlette.testclient import TestClient

    from yahtzee_env.web.door.app import create_app
    from yahtzee_env.web.limits import Limits

    app = create_app(tmp_path / "web.sqlite3", limits=Limits(rate=1000, burst=1000))
    with TestClient(app) as client:
        _duplicate_games(client, new_table, act, play_out)


def _duplicate_games(client, new_table, act, play_out):
    code, tokens, state = new_table(client, seats=("human", "human"), duplicate=True)
    assert state["duplicate"] is True
    while not state["over"]:
        seat, token = state["current"], tokens[str(state["current"])]
        if state.get("cup"):  # a person's turn starts with the dice in the cup
            intent = {"type": "roll", "hold": []}
        elif state["rolls_left"] == 2:
            intent = {"type": "roll", "hold": [0]}
        else:
            intent = {"type": "score", "box": max(state["options"], key=state["options"].get)}
        reply = act(client, code, seat, token, intent, state=state)
        assert reply.status_code == 200, reply.text
        state = reply.json()
    a, b = state["cards"]
    assert a == b
    r = review(client, state["result"]["game_id"], tokens=tokens)
    assert r["duplicate"] is True and r["parted"] == []
    assert verify_record(r["dice"]).ok and r["dice"]["duplicate"] is True

    code, tokens, state = new_table(client, seats=("human", "greedy"), duplicate=True)
    final = play_out(client, code, tokens["0"], state=state)
    r = review(client, final["result"]["game_id"], tokens=tokens)
    assert r["parted"], "greedy never keeps die 0 and re-rolls: they part at once"
    first = r["parted"][0]
    assert first["round"] == 1 and first["step"] == 0
    mine, theirs = first["choices"]
    assert mine["dice"] == theirs["dice"]  # the same first roll
    assert mine["action"] != theirs["action"]
    assert {"expected", "loss", "best_action"} <= set(mine)
    for bad in ("yes", 1):
        reply = client.post("/api/tables", json={"seats": ["human", "easy"], "duplicate": bad})
        assert reply.status_code == 400 and "duplicate" in reply.json()["error"]


@SQLITE
def test_statistics_count_the_dice_against_fair_dice(client, new_table, play_out):
    player = client.post("/api/players", json={"name": "Ada"}).json()
    stats = client.post("/api/stats", json={"player": player["token"]}).json()
    assert stats["rolls"]["dice"] == 0 and stats["rolls"]["p_value"] is None
    records = []
    for _ in range(2):
        code, tokens, state = new_table(client, seats=("human", "greedy"), player=player["token"])
        final = play_out(client, code, tokens["0"], state=state)
        records.append(review(client, final["result"]["game_id"], tokens=tokens)["dice"])
    rolls = client.post("/api/stats", json={"player": player["token"]}).json()["rolls"]
    from yahtzee_env.game.fair_dice import chi_square_uniform, roll_counts

    counts = [roll_counts(r["rolls"], 0) for r in records]
    faces = [sum(c.faces[f] for c in counts) for f in range(6)]
    assert rolls["games"] == 2 and rolls["faces"] == faces and rolls["dice"] == sum(faces)
    assert rolls["rolls"] == sum(c.rolls for c in counts) == 2 * 13 * 2  # one re-roll a turn
    assert rolls["yatzy_rolls"] == sum(c.yatzy_rolls for c in counts)
    assert rolls["yatzy_expected"] == pytest.approx(sum(c.yatzy_expected for c in counts), abs=1e-3)
    assert rolls["p_value"] == pytest.approx(chi_square_uniform(faces)[1], abs=1e-4)
    assert rolls["expected_each"] == pytest.approx(sum(faces) / 6, abs=0.01)


def test_quick_match_takes_duplicate_dice_as_a_preference(client, app):
    """The queue does not split on it: the table has duplicate dice when everyone matched
    asked for them."""
    from starlette.testclient import TestClient

    def stranger(name):
        c = TestClient(app)
        assert c.post("/api/session", json={"name": name}).status_code == 200
        return c

    ask = {"seats": 2, "rules": "official", "fill": "easy", "wait": 60}
    for mine, theirs, expected in ((True, True, True), (True, False, False)):
        a, b = stranger("Ann"), stranger("Bob")
        assert a.post("/api/quick", json={**ask, "duplicate": mine}).json()["state"] == "waiting"
        matched = b.post("/api/quick", json={**ask, "duplicate": theirs}).json()
        assert matched["state"] == "matched", matched
        state = b.get(f"/api/tables/{matched['code']}").json()
        assert state["duplicate"] is expected
        a.close()
        b.close()
    bad = stranger("Cid").post("/api/quick", json={**ask, "duplicate": "yes"})
    assert bad.status_code == 400 and "duplicate" in bad.json()["error"]


# ------------------------------------------------------------------ issue 58: client seeds
def test_every_seat_sends_its_client_seed_before_the_first_roll_and_the_record_holds_it(
    client, app, new_table, play_out, roll_first
):
    """The commitment is shown before the start; each seat (over HTTP, or the socket's
    ``client_seed`` intent) sends a seed; the dice follow from them all, also after a
    rebuild from the database; the review's record (v2) holds them and verifies."""
    code, tokens, state = new_table(client, seats=("human", "friend", "greedy"), online=True)
    assert not state["started"] and state["dice_version"] == DICE_V2
    committed = state["dice_commitment"]
    assert HEX64.match(committed) and state["client_seeds"] == [None, None, None]
    assert state["client_seeds_open"] is True
    friend = client.post(f"/api/tables/{code}/join", json={"name": "Bea"}).json()
    reply = send_seed(client, code, 0, tokens["0"], "first-try")
    assert reply.status_code == 200, reply.text
    reply = send_seed(client, code, 0, tokens["0"], "my-seed-42")  # may change it till then
    assert reply.json()["client_seeds"] == ["my-seed-42", None, None]
    with client.websocket_connect(f"/ws/{code}") as ws:
        ws.receive_json()
        ws.send_json(
            {"type": "client_seed", "id": 3, "seat": 1, "token": friend["token"],
             "client_seed": "bea-0123"}
        )  # fmt: skip
        ack = ws.receive_json()
        assert ack["type"] == "ack" and ack["id"] == 3, ack
    table = app.state.service.tables.load(code)
    seed = game_dice_seed(table.dice_secret, 0)
    state = client.get(f"/api/tables/{code}").json()
    assert state["client_seeds"] == ["my-seed-42", "bea-0123", None]
    assert state["client_seed_marks"][:2] == [
        client_seed_mark(seed, 0, 0, "my-seed-42"),
        client_seed_mark(seed, 0, 1, "bea-0123"),
    ]
    assert state["dice_commitment"] == committed == commitment(seed)
    start = client.post(f"/api/tables/{code}/start", json={"seat": 0, "token": tokens["0"]})
    state = start.json()
    # seat 0's turn starts with the dice in the cup: the game has not rolled until its tap
    assert state["current"] == 0 and state["cup"] and state["dice"] == []
    assert state["dice_commitment"] == committed and state["client_seeds_open"] is True
    state = roll_first(client, code, 0, tokens["0"], state)
    assert state["dice_commitment"] == committed and state["client_seeds_open"] is False
    used = ["my-seed-42", "bea-0123", DEFAULT_CLIENT_SEED]
    assert state["current"] == 0 and state["dice"] == sorted(roll_values_v2(seed, used, 0, 0, 0, 0))
    # a restart rebuilds the table from the database: the same dice
    app.state.service.tables.loaded.pop(code, None)
    assert client.get(f"/api/tables/{code}").json()["dice"] == state["dice"]
    # seat 0 plays, then the friend's seat
    state = play_through(client, code, {0: tokens["0"], 1: friend["token"]}, state)
    record = review(client, state["result"]["game_id"], tokens=tokens)["dice"]
    assert record["dice"] == DICE_V2 and record["format"] == "yahtzee-dice-v2"
    assert record["client_seeds"] == used and record["commitment"] == committed
    verdict = verify_record(record)
    assert verdict.ok, verdict
    moves = client.get(f"/api/tables/{code}/moves").json()
    first_roll = next(e for e in moves["events"][::-1] if e["seq"] == 0)  # seat 0's tap
    assert first_roll["msg"]["key"] == "narr.first_roll"
    assert list(first_roll["dice"]) == record["rolls"][0]["dice"]


def play_through(client, code, tokens, state):
    """Play the human seats of ``tokens`` to the end: the first roll (a person's turn
    starts with the dice in the cup), then score the best box at once."""
    while not state["over"]:
        seat = state["current"]
        if state["cup"]:
            action = {"type": "roll", "hold": []}
        else:
            action = {"type": "score", "box": max(state["options"], key=state["options"].get)}
        body = {"seat": seat, "token": tokens[seat], "seq": state["seq"], "game": state["game"],
                "action": action}  # fmt: skip
        reply = client.post(f"/api/tables/{code}/act", json=body)
        assert reply.status_code == 200, reply.text
        state = reply.json()
    return state


def test_a_socket_opening_while_a_seed_lands_is_sent_the_state_with_it(client, app, new_table):
    """A change of this server made while a socket opens (its state read, the socket not
    yet among the table's) reaches that socket: its first state is read again. A client
    seed moves no game or move (``version``), so a page shown the older copy after the
    seed's answer would show it unsent (the CI failure of stop 65)."""
    code, tokens, _ = new_table(client, seats=("human", "greedy"), online=True)
    service = app.state.service
    real = service.session_of
    landed = []

    async def seed_lands_meanwhile(conn):  # the await between the socket's read and its join
        if not landed:
            body = {"seat": 0, "token": tokens["0"], "client_seed": "meanwhile"}
            landed.append(await service.client_seed(code, body, None))
        return await real(conn)

    service.session_of = seed_lands_meanwhile
    try:
        with client.websocket_connect(f"/ws/{code}") as ws:
            first = ws.receive_json()
    finally:
        service.session_of = real
    assert landed and landed[0]["client_seeds"] == ["meanwhile", None]
    assert first["type"] == "state" and first["state"]["client_seeds"] == ["meanwhile", None]
    assert first["state"]["rev"] == landed[0]["rev"]


def test_a_game_a_cpu_starts_rolls_with_the_seed_sent_after_the_last(
    client, app, new_table, act, play_out, roll_first
):
    """A best-of-five passes the start on, so its second game is the CPU's to start and
    rolls as it starts: once the first game is over the next game's seeds are open (with
    its commitment shown), the person's seed goes in before the vote that starts it, and
    the CPU's first roll is made with it. Sent after that roll, a seed is late."""
    code, tokens, state = new_table(client, seats=("human", "greedy"), match=True)
    table = app.state.service.tables.load(code)
    assert state["client_seeds_game"] == 0 and state["next_dice_commitment"] is None
    assert send_seed(client, code, 0, tokens["0"], "game-0-seed").status_code == 200
    state = play_out(client, code, tokens["0"], state=state)
    assert state["over"] and state["first"] == 0
    next_seed = game_dice_seed(table.dice_secret, 1)
    assert state["client_seeds_game"] == 1 and state["client_seeds_open"] is True
    assert state["client_seeds"] == [None, None]  # the next game's: none sent yet
    assert state["next_dice_commitment"] == commitment(next_seed)
    assert state["dice_commitment"] != state["next_dice_commitment"]
    sent = send_seed(client, code, 0, tokens["0"], "game-1-seed").json()
    assert sent["client_seeds"] == ["game-1-seed", None] and sent["client_seeds_game"] == 1
    assert sent["client_seed_marks"][0] == client_seed_mark(next_seed, 1, 0, "game-1-seed")
    nxt = act(client, code, 0, tokens["0"], {"type": "next"}).json()
    assert nxt["game"] == 1 and nxt["first"] == 1  # the CPU starts, and has rolled
    assert nxt["dice_commitment"] == commitment(next_seed) and nxt["client_seeds_open"] is False
    assert nxt["client_seeds"] == ["game-1-seed", None]
    late = send_seed(client, code, 0, tokens["0"], "too-late")
    assert late.status_code == 409 and late.json()["code"] == "client_seed_late"
    nxt = play_out(client, code, tokens["0"], state=roll_first(client, code, 0, tokens["0"]))
    record = review(client, nxt["result"]["game_id"], tokens=tokens)["dice"]
    assert record["client_seeds"] == ["game-1-seed", DEFAULT_CLIENT_SEED]
    assert record["commitment"] == commitment(next_seed)
    assert verify_record(record).ok
    cpu_first = next(r for r in record["rolls"] if r["seat"] == 1 and r["turn"] == 0)
    seeds = ["game-1-seed", DEFAULT_CLIENT_SEED]
    assert sorted(cpu_first["dice"]) == sorted(roll_values_v2(next_seed, seeds, 1, 1, 0, 0))
    # the first game's record keeps its own seed
    first_record = review(client, state["result"]["game_id"], tokens=tokens)["dice"]
    assert first_record["client_seeds"] == ["game-0-seed", DEFAULT_CLIENT_SEED]


def test_attack_client_seed_after_the_first_roll_is_refused(client, new_table, act, roll_first):
    """Adversary: a player who has seen dice (theirs or another seat's) and sends a seed
    to steer the rolls to come: once the game has rolled, its seeds are fixed (409
    ``client_seed_late``); nor can anyone send a seed for a seat not theirs."""
    code, tokens, _ = new_table(client, seats=("human", "greedy"), online=True)
    assert send_seed(client, code, 0, tokens["0"], "early").status_code == 200
    client.post(f"/api/tables/{code}/start", json={"seat": 0, "token": tokens["0"]})
    rolled = roll_first(client, code, 0, tokens["0"])  # the dice are down: seen
    assert len(rolled["dice"]) == 5 and rolled["client_seeds_open"] is False
    late = send_seed(client, code, 0, tokens["0"], "late")
    assert late.status_code == 409 and late.json()["code"] == "client_seed_late", late.text
    assert client.get(f"/api/tables/{code}").json()["client_seeds"] == ["early", None]
    after = act(client, code, 0, tokens["0"], {"type": "roll", "hold": [0]})
    assert after.status_code == 200
    assert send_seed(client, code, 0, tokens["0"], "later").json()["code"] == "client_seed_late"
    # the CPU's seat (no token), a wrong token, a malformed seed
    other, other_tokens, _ = new_table(client, seats=("human", "greedy"), online=True)
    assert send_seed(client, other, 1, "x", "cpu-steer").status_code == 403
    assert send_seed(client, other, 0, tokens["0"], "steer").status_code == 403
    bad = send_seed(client, other, 0, other_tokens["0"], "a,b")
    assert bad.status_code == 400 and bad.json()["code"] == "client_seed_bad"


@SQLITE
def test_a_v1_table_keeps_playing_and_verifying_as_v1(
    client, app, db, new_table, play_out, roll_first
):
    """A table stored before issue 58 (no dice version) rolls and verifies by sha256-ctr-v1
    and takes no client seed."""
    code, tokens, _ = new_table(client, seats=("human", "greedy"))
    with sqlite3.connect(db) as con:  # as a table stored before migration 13 reads
        con.execute("UPDATE tables SET dice = NULL WHERE code = ?", (code,))
    app.state.service.tables.loaded.pop(code, None)
    state = client.get(f"/api/tables/{code}").json()
    assert "client_seeds" not in state
    table = app.state.service.tables.load(code)
    seed = game_dice_seed(table.dice_secret, 0)
    state = roll_first(client, code, 0, tokens["0"], state)
    assert state["dice"] == sorted(roll_values(seed, 0, 0, 0))
    refused = send_seed(client, code, 0, tokens["0"], "mine")
    assert refused.status_code == 409 and refused.json()["code"] == "client_seed_v1"
    final = play_out(client, code, tokens["0"], state=state)
    record = review(client, final["result"]["game_id"], tokens=tokens)["dice"]
    assert record["dice"] == "sha256-ctr-v1" and verify_record(record).ok
