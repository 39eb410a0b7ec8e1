"""The page's dice checker (``static/js/fair_dice.js``, issues 49 and 58) equals
`yahtzee_env.game.fair_dice` on the same vectors: Node runs the page's own module (Web
Crypto) on Python's seeds: v2's roll values, first-player draws and client-seed marks, and
the verdicts on real records of both versions, edited ones included."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from yahtzee_env.game.engine import Game
from yahtzee_env.game.fair_dice import (
    DICE_V2,
    batch_seed,
    client_seed_mark,
    first_draw,
    roll_values_v2,
    verify_record,
)

HERE = Path(__file__).parent
STATIC_JS = HERE.parents[1] / "yahtzee_env" / "web" / "static" / "js"
NODE = shutil.which(os.environ.get("YAHTZEE_NODE", "node"))
SEED = bytes(range(32))

pytestmark = pytest.mark.skipif(NODE is None, reason="no node (apt-get install nodejs)")


def run_node(tmp_path: Path, payload: dict) -> dict:
    (tmp_path / "package.json").write_text('{"type": "module"}')
    shutil.copy(STATIC_JS / "fair_dice.js", tmp_path / "fair_dice.js")
    done = subprocess.run(
        [NODE, str(HERE / "fair_dice_equality.mjs"), str(tmp_path / "fair_dice.js")],
        input=json.dumps(payload), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def record(algorithm: str, seats: int, duplicate: bool, seeds, game_no: int, play: int) -> dict:
    game = Game("official", seats, duplicate=duplicate)
    extra = (
        {} if algorithm != DICE_V2 else {"dice": DICE_V2, "game": game_no, "client_seeds": seeds}
    )
    game.reset(np.random.default_rng(play), first=0, seed=batch_seed(SEED, 1, play), **extra)
    rng = np.random.default_rng(play + 100)
    while not game.over:
        game.step(int(rng.choice(np.flatnonzero(game.legal_action_mask()))))
    return json.loads(json.dumps(game.seeded.record()))


def test_the_page_derives_the_same_v2_dice_and_verdicts_as_python(tmp_path):
    rng = np.random.default_rng(58)
    values, draws, marks = [], [], []
    for k in range(120):
        seed = batch_seed(SEED, 0, k)
        seeds = [f"s{int(x)}" for x in rng.integers(0, 10**9, size=int(rng.integers(1, 5)))]
        if k % 7 == 0:
            seeds[0] = "server"
        place = dict(game=int(rng.integers(0, 40)), seat=int(rng.integers(0, len(seeds))),
                     turn=int(rng.integers(0, 13)), roll=int(rng.integers(0, 3)))  # fmt: skip
        values.append({"seed": seed.hex(), "client_seeds": seeds, **place})
        draws.append({"seed": seed.hex(), "game": place["game"], "seats": 1 + k % 4})
        marks.append({"seed": seed.hex(), "game": place["game"], "seat": place["seat"],
                      "client_seed": seeds[place["seat"]]})  # fmt: skip
    # the documented example (docs/fair_dice.md)
    values.append({"seed": SEED.hex(), "client_seeds": ["server", "my-seed-42"], "game": 0,
                   "seat": 0, "turn": 0, "roll": 0})  # fmt: skip
    records = [
        record("sha256-ctr-v1", 2, False, None, 0, 1),
        record(DICE_V2, 2, False, [None, "my-seed-42"], 0, 2),
        record(DICE_V2, 3, True, ["a", None, "c-3"], 4, 3),
        record(DICE_V2, 4, False, ["w", "x", "y", "z"], 1, 4),
    ]
    edited_die = copy.deepcopy(records[1])
    edited_die["rolls"][11]["dice"][0] = edited_die["rolls"][11]["dice"][0] % 6 + 1
    edited_seed = copy.deepcopy(records[3])
    edited_seed["client_seeds"][2] = "y2"
    edited_draw = dict(records[2], first_draw=(records[2]["first_draw"] + 1) % 3)
    relabelled = dict(records[0], dice=DICE_V2, format="yahtzee-dice-v2")
    records += [edited_die, edited_seed, edited_draw, relabelled]
    out = run_node(tmp_path, {"values": values, "draws": draws, "marks": marks, "records": records})

    assert out["values"] == [
        list(
            roll_values_v2(
                bytes.fromhex(v["seed"]),
                v["client_seeds"],
                v["game"],
                v["seat"],
                v["turn"],
                v["roll"],
            )
        )
        for v in values
    ]
    assert out["values"][-1] == [3, 2, 6, 1, 4]
    assert out["draws"] == [
        first_draw(bytes.fromhex(d["seed"]), d["game"], d["seats"]) for d in draws
    ]
    assert out["marks"] == [
        client_seed_mark(bytes.fromhex(m["seed"]), m["game"], m["seat"], m["client_seed"])
        for m in marks
    ]
    verdicts = out["verdicts"]
    for python, page in zip(records, verdicts, strict=True):
        assert verify_record(python).ok == page["ok"], (verify_record(python), page)
    assert [v["ok"] for v in verdicts] == [True] * 4 + [False] * 4
    assert verdicts[4]["key"] == "dice.check_roll" and verdicts[4]["params"]["n"] == 12
    assert verify_record(edited_die).roll == 12
    # the edited client seed is named by seat, as `yahtzee verify-game` names it
    assert verdicts[5]["key"] == "dice.check_seed_edited" and verdicts[5]["seat"] == 2
    assert verify_record(edited_seed).seat == 2
    assert verdicts[6]["key"] == "dice.check_first_draw"
    assert not verdicts[7]["ok"]
    assert re.fullmatch(r"[0-9a-f]{32}", out["fresh"])
