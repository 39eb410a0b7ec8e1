"""What the server does for the page offline (issue 50): the offline levels in /api/config
and under /levels/, the service worker at /sw.js (its headers and what it caches), the web
manifest, and the finished offline games it takes in (replayed, kept once, never rated)."""

from __future__ import annotations

import hashlib
import json
import struct
import subprocess
import sys
import time

import numpy as np
import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")

from yahtzee_env.game.cpu import cpu_action
from yahtzee_env.game.dice import ROLL_OUTCOMES
from yahtzee_env.game.engine import BOX_ACTION_OFFSET, Game
from yahtzee_env.policies.resolve import resolve_policy
from yahtzee_env.web.tables.offline_games import ReplayDraws, dealt

OFFLINE = ["easy", "medium", "hard", "expert"]


def test_the_config_names_the_offline_levels(client):
    assert client.get("/api/config").json()["offline_levels"] == OFFLINE


def test_a_level_file_is_its_weights_with_their_digest(client):
    manifest = client.get("/levels/hard.json")
    assert manifest.status_code == 200
    body = manifest.json()
    assert (body["format"], body["input_version"], body["hidden"]) == (
        "yahtzee-rl-web-level",
        2,
        [256, 256],
    )
    weights = client.get(f"/levels/{body['weights_file']}")
    assert weights.headers["content-type"] == "application/octet-stream"
    assert hashlib.sha256(weights.content).hexdigest() == body["weights_sha256"]
    assert len(weights.content) == 4 * (86 * 256 + 256 + 256 * 256 + 256 + 256 * 45 + 45)
    again = client.get("/levels/hard.f32", headers={"If-None-Match": weights.headers["etag"]})
    assert again.status_code == 304
    for name in ("master.json", "duelist.f32", "hard.npz", "..%2Fhard.json", "hard"):
        assert client.get(f"/levels/{name}").status_code == 404, name


def test_the_service_worker_is_served_at_the_root_never_cached(client):
    reply = client.get("/sw.js")
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/javascript")
    assert reply.headers["cache-control"] == "no-cache"
    assert reply.headers["service-worker-allowed"] == "/"
    first, second = reply.text.splitlines()[:2]
    urls = json.loads(first.removeprefix("self.PRECACHE = ").removesuffix(";"))
    assert {"/", "/api/config", "/static/js/offline.js", "/static/js/game/engine.js"} <= set(urls)
    assert {"/levels/hard.json", "/levels/hard.f32", "/static/manifest.webmanifest"} <= set(urls)
    assert "/static/sw.js" not in urls and not any("master" in u for u in urls)
    for url in urls:  # the worker's install fails if one of them does not answer
        assert client.get(url).status_code == 200, url
    assert second.startswith("self.VERSION = ")


def test_the_web_manifest_names_icons_that_exist(client):
    reply = client.get("/static/manifest.webmanifest")
    assert reply.headers["content-type"].startswith("application/manifest+json")
    manifest = reply.json()
    assert (manifest["start_url"], manifest["display"]) == ("/", "standalone")
    sizes = set()
    for icon in manifest["icons"]:
        png = client.get(icon["src"]).content
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = struct.unpack(">II", png[16:24])
        assert icon["sizes"] == f"{width}x{height}"
        sizes.add(width)
    assert {192, 512} <= sizes  # what Chromium's install criteria ask for
    assert 'rel="manifest"' in client.get("/").text


# ------------------------------------------------------------------ finished offline games
def offline_record(seed: int, rules: str = "official", level: str = "hard") -> dict:
    """A game as the page sends it: the human takes the best-paying box at once; the level
    plays its seat; the draws are those the game dealt, in order."""
    draws = np.random.default_rng(seed).integers(0, ROLL_OUTCOMES, 78).tolist()
    return page_record(f"g{seed}", draws, rules, level)


def page_record(
    game_id: str, draws: list[int], rules: str = "official", level: str = "hard", cpu=None
) -> dict:
    """A 2-seat game record on ``draws``: the human takes the best-paying box at once, the
    CPU seat plays as ``level`` does (or as ``cpu(game)`` says: a forged page's CPU)."""
    game = Game(rules, 2)
    game.reset(ReplayDraws(draws))
    policy = resolve_policy(level)
    actions = []
    while not game.over:
        if game.current == 0:
            legal, points = game.box_options()
            action = BOX_ACTION_OFFSET + int(np.argmax(np.where(legal, points, -1)))
        else:
            action = cpu(game) if cpu is not None else cpu_action(game, 1, policy)
        actions.append([game.current, action])
        game.step(action)
    return {
        "id": game_id,
        "rules": rules,
        "seats": ["human", level],
        "draws": draws[: dealt(game)],
        "actions": actions,
        "totals": game.totals(),
    }


def send(client, *games):
    return client.post("/api/offline-games", json={"games": list(games)})


def test_a_finished_offline_game_counts_once_marked_offline(client):
    record = offline_record(1)
    assert send(client, record).status_code == 403  # no session: whose statistics?
    client.post("/api/session", json={"name": "Ada"})
    reply = send(client, record)
    assert reply.status_code == 200, reply.text
    assert reply.json() == {"stored": ["g1"], "refused": []}
    assert send(client, record).json()["stored"] == ["g1"]  # sent again: still one game
    stats = client.post("/api/stats", json={}).json()
    assert stats["by_mode"]["offline"]["games"] == 1
    assert stats["by_mode"]["offline"]["mean_score"] == record["totals"][0]  # the replay's
    assert stats["history"][0]["offline"] is True and stats["history"][0]["verified"] is False
    # the page dealt its dice: only in its own row (issue 57), not in the headline figures
    assert stats["overall"]["games"] == 0 and stats["by_opponents"] == {}
    storage = client.app.state.service.storage
    assert storage._query("SELECT COUNT(*) AS n FROM rated_games")[0]["n"] == 0  # never rated


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda r: r["actions"].__setitem__(0, [1, r["actions"][0][1]]), "out of turn"),
        (lambda r: r["actions"].pop(), "not finished"),
        (lambda r: r["draws"].append(5), "more dice were sent"),
        (lambda r: r["draws"].pop(), "more dice than were sent"),
        (lambda r: r.__setitem__("seats", ["human", "master"]), "offline levels"),
        (lambda r: r.__setitem__("seats", ["hard", "human"]), "offline levels"),
        (lambda r: r.__setitem__("rules", "house"), "unknown rules"),
        (lambda r: r.__setitem__("id", "../x"), "id must be"),
        (lambda r: r["draws"].__setitem__(0, 7776), "ints in 0..7775"),
        (lambda r: r["actions"].__setitem__(0, [0, 45]), "[seat, action]"),
    ],
)
def test_a_doctored_offline_game_is_refused_saying_why(client, change, why):
    client.post("/api/session", json={"name": "Ada"})
    good, bad = offline_record(2), offline_record(3)
    change(bad)
    reply = send(client, good, bad)
    assert reply.status_code == 200
    refused = reply.json()["refused"]
    assert reply.json()["stored"] == ["g2"] and len(refused) == 1
    assert why in refused[0]["error"], refused
    assert client.post("/api/stats", json={}).json()["by_mode"]["offline"]["games"] == 1


def test_an_illegal_box_is_refused(client):
    client.post("/api/session", json={"name": "Ada"})
    record = offline_record(4)
    first_box = record["actions"][0][1]
    second_turn = [i for i, (seat, _) in enumerate(record["actions"]) if seat == 0][1]
    record["actions"][second_turn] = [0, first_box]  # the same box again
    assert "illegal move" in send(client, record).json()["refused"][0]["error"]


def test_the_request_is_bounded(client):
    client.post("/api/session", json={"name": "Ada"})
    assert send(client).status_code == 400
    assert client.post("/api/offline-games", json={"games": "x"}).status_code == 400
    assert send(client, *[offline_record(5)] * 21).status_code == 400


def test_a_game_played_in_the_page_online_counts_apart_never_rated(client):
    """A solo game the player chose to play in the page while online (the server only
    records it): the same checks, marked ``in_page``, never rated."""
    client.post("/api/session", json={"name": "Ada"})
    online, away = offline_record(6), offline_record(7)
    online["played"] = "in_page"
    doctored = {**offline_record(8), "played": "server"}
    doctored["id"] = "g8"
    cheated = {**offline_record(9), "played": "in_page"}
    cheated["actions"][0] = [0, cheated["actions"][0][1] ^ 1]  # another move on those dice
    reply = send(client, online, away, doctored, cheated).json()
    assert reply["stored"] == ["g6", "g7"]
    errors = {r["id"]: r["error"] for r in reply["refused"]}
    assert "played must be one of offline, in_page" in errors["g8"]
    assert set(errors) == {"g8", "g9"}
    stats = client.post("/api/stats", json={}).json()
    assert stats["by_mode"]["in_page"]["games"] == 1
    assert stats["by_mode"]["offline"]["games"] == 1
    assert stats["by_mode"]["solo"]["games"] == 0  # the server dealt neither (issue 57)
    assert stats["by_mode"]["in_page"]["mean_score"] == online["totals"][0]  # the replay's
    marks = {h["score"]: (h["in_page"], h["offline"]) for h in stats["history"]}
    assert marks[online["totals"][0]] == (True, False)
    assert marks[away["totals"][0]] == (False, True)
    storage = client.app.state.service.storage
    assert storage._query("SELECT COUNT(*) AS n FROM rated_games")[0]["n"] == 0


@pytest.mark.backends("sqlite")
def test_a_burst_of_games_is_limited_per_player(db):
    """Each game sent spends a token of the player's bucket: past it, 429 with Retry-After
    and nothing replayed; another player has a bucket of their own."""
    from starlette.testclient import TestClient

    from yahtzee_env.web.door.app import create_app
    from yahtzee_env.web.limits import Limits

    limits = Limits(page_game_burst=3, page_games_per_minute=1)
    with TestClient(create_app(db, limits=limits)) as ada:
        ada.post("/api/session", json={"name": "Ada"})
        assert send(ada, offline_record(10), offline_record(11)).json()["stored"] == ["g10", "g11"]
        refused = send(ada, offline_record(12), offline_record(13))
        assert refused.status_code == 429
        assert refused.json()["code"] == "page_games_budget"
        assert int(refused.headers["Retry-After"]) >= 1
        assert send(ada, offline_record(12)).json()["stored"] == ["g12"]  # the last token
        ada.cookies.clear()
        ada.post("/api/session", json={"name": "Bob"})
        assert send(ada, offline_record(14)).json()["stored"] == ["g14"]


def test_games_past_the_daily_cap_are_not_replayed(client, monkeypatch):
    from yahtzee_env.web.tables import offline_games

    replayed = []
    real = offline_games.replay
    monkeypatch.setattr(offline_games, "MAX_OFFLINE_GAMES_PER_DAY", 2)
    monkeypatch.setattr(
        offline_games, "replay", lambda r, lv: replayed.append(r["id"]) or real(r, lv)
    )
    client.post("/api/session", json={"name": "Ada"})
    bad = offline_record(15)
    bad["actions"].pop()
    reply = send(client, offline_record(16), bad, offline_record(17), offline_record(18)).json()
    assert reply["stored"] == ["g16", "g17"] and [r["id"] for r in reply["refused"]] == ["g15"]
    assert replayed == ["g16", "g15", "g17"]  # g18, past the cap, cost nothing
    assert send(client, offline_record(18)).json() == {"stored": [], "refused": []}
    assert replayed == ["g16", "g15", "g17"]


def test_export_web_writes_what_the_page_loads(tmp_path):
    out = tmp_path / "levels"
    cli = [sys.executable, "-m", "yahtzee_env", "export"]
    done = subprocess.run(
        [*cli, "hard", "--format", "web", "--out", str(out)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "hard.json").read_text())
    blob = (out / "hard.f32").read_bytes()
    assert hashlib.sha256(blob).hexdigest() == manifest["weights_sha256"]
    refused = subprocess.run(
        [*cli, "master", "--format", "web", "--out", str(out)], capture_output=True, text=True
    )
    assert refused.returncode == 2 and "cannot play in the page" in refused.stderr


# ------------------------------------------------------------------ forged pages (issue 57)
PASSWORD = "correct horse battery"
ALL_SIXES = [ROLL_OUTCOMES - 1] * 78  # draw 7775: five sixes, every roll


def first_open_box(game) -> int:
    """A forged page's CPU: it scores its first open box at once."""
    legal, _ = game.box_options()
    return BOX_ACTION_OFFSET + int(np.argmax(legal))


def headline(stats: dict) -> dict:
    """Every figure of My statistics but the rows of games played in the page."""
    modes = {k: v for k, v in stats["by_mode"].items() if k not in ("offline", "in_page")}
    chart = [h for h in stats["history"] if h["verified"]]
    return {
        "overall": stats["overall"],
        "rolls": stats["rolls"],
        "by_opponents": stats["by_opponents"],
        "by_mode": modes,
        "chart": chart,
    }


def figures(client) -> dict:
    """What a player's page and everyone's leaderboard show of them."""
    service = client.app.state.service
    return {
        "stats": headline(client.post("/api/stats", json={}).json()),
        "rating": client.get("/api/session").json()["rating"],
        "board": client.get("/api/leaderboard").json(),
        "rated": service.storage._query("SELECT COUNT(*) AS n FROM rated_games")[0]["n"],
    }


def test_attack_forged_dice_count_only_in_their_own_row(client, new_table, play_out):
    """A forged page sends thirteen Yatzys on dice that were all sixes (its CPU seat plays
    as the level would on them, so every check the server can make passes): the game shows
    in its own row, marked unverified, and no other figure moves: not the overall, solo or
    per-level figures, the chart, the rating or the leaderboard. A genuine game played in
    the page shows in its own row too."""
    client.post("/api/session", json={"name": "Forger"})
    signup = {"username": "forger", "password": PASSWORD}
    assert client.post("/api/account/signup", json=signup).status_code == 200
    code, _, _ = new_table(client, ("human", "expert"))
    play_out(client, code, None)  # a game the server dealt (the session's seat): to keep
    time.sleep(1)  # the player's budget, spent by the game's moves in one burst, refills
    before = figures(client)
    assert before["stats"]["overall"]["games"] == 1 and before["rated"] == 1

    forged = page_record("sixes", list(ALL_SIXES), level="expert")
    genuine = {**offline_record(21, level="expert"), "played": "in_page"}
    reply = send(client, forged, genuine).json()
    assert reply == {"stored": ["sixes", "g21"], "refused": []}

    stats = client.post("/api/stats", json={}).json()
    assert figures(client) == before  # nothing but their own rows moved
    own = stats["by_mode"]["offline"]
    assert own["games"] == 1 and own["yahtzees"] == 13
    assert own["best_score"] == forged["totals"][0] > 1000
    assert stats["by_mode"]["in_page"]["games"] == 1
    assert stats["by_mode"]["in_page"]["mean_score"] == genuine["totals"][0]
    tagged = [(h["offline"], h["in_page"], h["verified"]) for h in stats["history"]]
    assert sorted(tagged) == [(False, False, True), (False, True, False), (True, False, False)]


def test_attack_a_cpu_that_does_not_play_as_its_level_is_refused(client):
    """The issue's record: all sixes, and an 'expert' that scored its first open box at
    once. The server plays each CPU seat's move again with the level's network on the
    record's dice and refuses the record naming the move that differs; nothing is kept."""
    client.post("/api/session", json={"name": "Forger"})
    forged = page_record("weak", list(ALL_SIXES), level="expert", cpu=first_open_box)
    honest = page_record("honest", list(ALL_SIXES), level="expert")
    reply = send(client, forged, honest).json()
    assert reply["stored"] == ["honest"]
    (refused,) = reply["refused"]
    assert refused["id"] == "weak"
    assert "seat 1's move" in refused["error"] and "is not what expert plays" in refused["error"]
    stats = client.post("/api/stats", json={}).json()
    assert stats["by_mode"]["offline"]["games"] == 1 and stats["overall"]["games"] == 0
