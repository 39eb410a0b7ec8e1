"""Issue 58, item 2: a person's turn starts with the dice in the cup; the first roll is the
player's Roll (the dice the committed derivation gives for that roll, whenever it is tapped);
the CPU's turns and a seat the computer plays roll by themselves."""

from __future__ import annotations

import pytest
from visitors import send_seed

SQLITE = pytest.mark.backends("sqlite")


@SQLITE
def test_a_persons_turn_starts_in_the_cup_and_roll_makes_the_committed_roll(
    client, new_table, act, play_out
):
    code, tokens, state = new_table(client, seats=("human", "greedy"))
    assert state["current"] == 0 and state["cup"] is True
    assert state["dice"] == [] and state["options"] == {} and state["rolls_left"] == 3
    # nothing down: no score, no hold, no hint
    refused = act(client, code, 0, tokens["0"], {"type": "score", "box": "chance"}, state=state)
    assert refused.status_code == 409 and refused.json()["code"] == "roll_first"
    refused = act(client, code, 0, tokens["0"], {"type": "roll", "hold": [0]}, state=state)
    assert refused.status_code == 409 and refused.json()["code"] == "roll_first"
    # the tap: all five dice, one roll spent
    rolled = act(client, code, 0, tokens["0"], {"type": "roll", "hold": []}, state=state)
    assert rolled.status_code == 200, rolled.text
    after = rolled.json()
    assert after["cup"] is False and len(after["dice"]) == 5 and after["rolls_left"] == 2
    assert after["options"] and after["events"][-1]["msg"]["key"] == "narr.first_roll"
    # the same Roll again (a double tap, a retry): refused, nothing more spent
    again = act(client, code, 0, tokens["0"], {"type": "roll", "hold": []}, state=state)
    assert again.status_code == 409 and again.json()["code"] == "stale_seq"
    reloaded = client.get(f"/api/tables/{code}").json()  # a reload does not roll again
    assert reloaded["dice"] == after["dice"] and reloaded["rolls_left"] == 2
    # the CPU's turn rolled by itself: no first-roll mark of its own, dice down at once
    final = play_out(client, code, tokens["0"], state=after)
    review = client.post(f"/api/games/{final['result']['game_id']}", json={"tokens": tokens})
    record = review.json()["dice"]
    first = next(r for r in record["rolls"] if r["seat"] == 0 and r["turn"] == 0)
    assert first["roll"] == 0 and first["dice"] == after["dice"]  # the committed roll 0
    log = client.get(f"/api/tables/{code}/moves").json()["events"]
    marks = [e for e in log if e["msg"]["key"] == "narr.first_roll"]
    assert {e["seat"] for e in marks} == {0} and len(marks) == 13
    cpu = [e for e in log if e["seat"] == 1]
    assert cpu and all(e["dice_before"] for e in cpu)  # its dice were down when it moved


@SQLITE
def test_the_tap_cannot_change_the_dice(tmp_path):
    """Two servers of the same table seed: a first roll made at once and one made after a
    restart give the same dice (they are the dealt roll of that place, not the tap's)."""
    from starlette.testclient import TestClient

    from yahtzee_env.web.door.app import create_app

    db = tmp_path / "web.sqlite3"
    with TestClient(create_app(db)) as c:
        reply = c.post("/api/tables", json={"seats": ["human", "easy"]}).json()
        code, token, state = reply["code"], reply["tokens"]["0"], reply["state"]
    with TestClient(create_app(db)) as c:  # a restart: the table replays from its log
        assert c.get(f"/api/tables/{code}").json()["cup"] is True
        body = {"seat": 0, "token": token, "action": {"type": "roll", "hold": []}}
        late = c.post(f"/api/tables/{code}/act", json={**body, "seq": 0, "game": 0}).json()
    with TestClient(create_app(db)) as c:  # and again: the tap is in the log
        now = c.get(f"/api/tables/{code}").json()
        assert now["cup"] is False and now["dice"] == late["dice"] and now["rolls_left"] == 2
    assert state["dice_commitment"] == now["dice_commitment"]


@SQLITE
def test_a_solo_seat_sends_its_seed_before_its_first_tap(client, app, new_table, roll_first):
    """A solo table starts at once, but its first roll is the person's tap: until then the
    game has not rolled, its seeds are open, and the dice follow from the seed sent."""
    from yahtzee_env.game.fair_dice import DEFAULT_CLIENT_SEED, roll_values_v2
    from yahtzee_env.web.tables.deal import game_dice_seed

    code, tokens, state = new_table(client, seats=("human", "greedy"))
    assert state["cup"] and state["client_seeds_open"] is True
    reply = send_seed(client, code, 0, tokens["0"], "my-own-seed")
    assert reply.status_code == 200, reply.text
    assert reply.json()["client_seeds"] == ["my-own-seed", None] and reply.json()["cup"]
    state = roll_first(client, code, 0, tokens["0"])
    seed = game_dice_seed(app.state.service.tables.load(code).dice_secret, 0)
    used = ["my-own-seed", DEFAULT_CLIENT_SEED]
    assert state["dice"] == sorted(roll_values_v2(seed, used, 0, 0, 0, 0))
    assert state["client_seeds_open"] is False
    app.state.service.tables.loaded.pop(code, None)  # a rebuild from the database: the same
    assert client.get(f"/api/tables/{code}").json()["dice"] == state["dice"]


@SQLITE
def test_attack_a_reload_cannot_reroll_the_first_roll(
    client, app, clock, new_table, act, roll_first
):
    """Adversary: a player who taps Roll, dislikes the first roll and tries to get another:
    reloads the page (and the server rebuilds the table), taps Roll again, sends a new
    client seed. The dice stay those dealt: the tap is in the log, the seeds are fixed. The
    dice are those the seed derivation gives for the place (seat, turn, roll), whenever the
    tap comes: waiting, or reloading before the tap, changes nothing."""
    from yahtzee_env.game.fair_dice import DEFAULT_CLIENT_SEED, roll_values_v2
    from yahtzee_env.web.tables.deal import game_dice_seed

    code, tokens, state = new_table(client, seats=("human", "greedy"))
    clock.now += 37.5  # the tap comes late, after a reload (a rebuild) in the cup
    app.state.service.tables.loaded.pop(code, None)
    assert client.get(f"/api/tables/{code}").json()["cup"] is True
    rolled = roll_first(client, code, 0, tokens["0"], state)
    dice = rolled["dice"]
    seed = game_dice_seed(app.state.service.tables.load(code).dice_secret, 0)
    seeds = [DEFAULT_CLIENT_SEED] * 2
    assert dice == sorted(roll_values_v2(seed, seeds, 0, 0, 0, 0))
    app.state.service.tables.loaded.pop(code, None)  # a reload after a restart
    reloaded = client.get(f"/api/tables/{code}").json()
    assert reloaded["cup"] is False and reloaded["dice"] == dice and reloaded["rolls_left"] == 2
    again = act(client, code, 0, tokens["0"], {"type": "roll", "hold": []}, state=state)
    assert again.status_code == 409 and again.json()["code"] == "stale_seq"  # the old tap
    late = send_seed(client, code, 0, tokens["0"], "another-try")
    assert late.status_code == 409 and late.json()["code"] == "client_seed_late"
    now = client.get(f"/api/tables/{code}").json()
    assert now["dice"] == dice and now["rolls_left"] == 2 and now["client_seeds"] == [None, None]
    assert [e["msg"]["key"] for e in now["events"]].count("narr.first_roll") == 1


@SQLITE
def test_attack_a_replayed_first_roll_rolls_once(client, new_table, act, roll_first):
    """Adversary: a player (or a page gone wrong) who sends the tap on Roll twice: a double
    tap, a retry, a replay over the socket, an old turn's tap kept and sent again in a later
    turn, a tap that holds dice it has not seen. The first roll is made once; the copies are
    refused as stale (stamped with a state the table has left) and spend nothing."""
    code, tokens, state = new_table(client, seats=("human", "greedy"))
    token = tokens["0"]
    tap = {"type": "roll", "hold": []}
    held = act(client, code, 0, token, {"type": "roll", "hold": [0, 1]}, state=state)
    assert held.status_code == 409 and held.json()["code"] == "roll_first"  # nothing seen
    with client.websocket_connect(f"/ws/{code}") as ws:
        ws.receive_json()
        move = {"type": "act", "seat": 0, "token": token, "seq": state["seq"], "action": tap}
        ws.send_json({**move, "game": state["game"], "id": 1})
        while (reply := ws.receive_json())["type"] not in ("ack", "error"):
            pass
        assert reply["type"] == "ack" and reply["id"] == 1, reply
        ws.send_json({**move, "game": state["game"], "id": 2})  # the same tap again
        while (reply := ws.receive_json())["type"] not in ("ack", "error"):
            pass
        assert reply["type"] == "error" and reply["code"] == "stale_seq", reply
    again = act(client, code, 0, token, tap, state=state)  # and over HTTP
    assert again.status_code == 409 and again.json()["code"] == "stale_seq"
    now = client.get(f"/api/tables/{code}").json()
    assert not now["cup"] and now["rolls_left"] == 2 and len(now["dice"]) == 5
    first_dice = now["dice"]
    marks = [e for e in now["events"] if e["msg"]["key"] == "narr.first_roll"]
    assert len(marks) == 1 and marks[0]["dice"] == first_dice
    # the turn scored, the next one in the cup: the old tap, sent again, is still stale
    box = max(now["options"], key=now["options"].get)
    turn = act(client, code, 0, token, {"type": "score", "box": box}, state=now).json()
    assert turn["cup"] and turn["current"] == 0
    old = act(client, code, 0, token, tap, state=state)
    assert old.status_code == 409 and old.json()["code"] == "stale_seq"
    later = client.get(f"/api/tables/{code}").json()
    assert later["cup"] and later["version"] == turn["version"]
    rolled = roll_first(client, code, 0, token, later)  # its own tap: one roll of its own
    assert rolled["rolls_left"] == 2
