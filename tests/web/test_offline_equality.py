"""The page's rules and levels (``static/js/game``, ``static/js/policies``) equal the Python
ones on the same dice (issue 50): Node runs the page's own modules on Python's draws.

* the tables, whole: dice, keeps, outcome counts, canonical holds, natural scores, and the
  legal boxes of every (context, filled boxes) of every preset;
* 100,000 sampled states (every preset, a fifth of the rolls a Yahtzee, so that the joker and
  the bonus come up): legal masks, what filling each legal box does (points, Yahtzee bonus,
  reward, upper total, yahtzee box), the observation with its 14 features (float32
  tolerance), and each offline level's action;
* 1,000 games per offline level and preset on the same draws give the same final cards.

A level's action may differ only at a near tie: where Python's logits of the two actions are
closer than `TIE_TOLERANCE` (the networks add in other orders: numpy's float32 BLAS, the
page's float64 sums rounded per layer). Such states and games are counted and bounded.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import twins

from yahtzee_env.game import dice as D
from yahtzee_env.game.engine import Game
from yahtzee_env.game.observation import encode_batch, model_input
from yahtzee_env.game.rules import (
    IS_YAHTZEE,
    NATURAL_SCORES,
    NUM_BOXES,
    NUM_FILLED_MASKS,
    PRESETS,
    YAHTZEE_0,
    YAHTZEE_50,
    YAHTZEE_OPEN,
    RuleSet,
)
from yahtzee_env.policies.models import load_opponent
from yahtzee_env.policies.web_levels import (
    TIE_TOLERANCE,  # a near tie (float32 ~1e-5)
    offline_levels,
    web_level,
)

STATIC_JS = Path(__file__).parents[2] / "yahtzee_env" / "web" / "static" / "js"
NODE = twins.node()
MAX_ROLLS = 39  # 13 turns of 3 rolls: the most draws a solo game uses
PRESET_NAMES = list(PRESETS)


@pytest.fixture(scope="module", autouse=True)
def _node():
    """Node runs the page's side: missing, every test here fails (tests/web/twins.py)."""
    twins.require_node()


class DrawSequence:
    """A stand-in for `numpy.random.Generator` that makes `engine.DiceRoller` deal the given
    draws in order (the roller pops from the end of the block it asks for)."""

    def __init__(self, draws: np.ndarray) -> None:
        self.draws = [int(d) for d in draws]
        self.asked = False

    def integers(self, low: int, high: int, size: int) -> np.ndarray:
        assert not self.asked and (low, high) == (0, D.ROLL_OUTCOMES), "one block of draws"
        self.asked = True
        return np.array([0] * (size - len(self.draws)) + self.draws[::-1], dtype=np.int64)


def sample_states(n: int, seed: int) -> np.ndarray:
    """``int32 [n, 6]``: roll, rolls left, filled boxes, upper total, yahtzee box, preset."""
    rng = np.random.default_rng(seed)
    yahtzees = np.flatnonzero(IS_YAHTZEE)
    roll = np.where(rng.random(n) < 0.2, rng.choice(yahtzees, n), rng.integers(0, D.NUM_ROLLS, n))
    filled = rng.integers(0, NUM_FILLED_MASKS - 1, n)  # never all 13
    # an upper total the filled upper boxes could hold (0 .. five of each filled face)
    most = ((filled[:, None] >> np.arange(6)) & 1) @ (5 * np.arange(1, 7))
    upper = (rng.random(n) * (most + 1)).astype(np.int64)
    ystate = np.where((filled >> 11) & 1, rng.choice([YAHTZEE_50, YAHTZEE_0], n), YAHTZEE_OPEN)
    return np.stack(
        [roll, rng.integers(0, 3, n), filled, upper, ystate, rng.integers(0, len(PRESETS), n)],
        axis=1,
    ).astype(np.int32)


def python_states(states: np.ndarray) -> dict[str, np.ndarray]:
    """Masks, fills and network inputs of the states, by the Python rules."""
    n = len(states)
    roll, rolls_left, filled, upper, ystate, preset = (
        states[:, i].astype(np.int64) for i in range(6)
    )
    masks = np.zeros((n, 45), dtype=np.uint8)
    fills = np.full((n, NUM_BOXES, 5), -1, dtype=np.int32)
    obs = np.zeros((n, 86), dtype=np.float32)
    masks[:, :32] = (rolls_left > 0)[:, None]
    for p, name in enumerate(PRESET_NAMES):
        rows = np.flatnonzero(preset == p)
        rules = PRESETS[name]
        tables = rules.tables
        r, f, u, y = roll[rows], filled[rows], upper[rows], ystate[rows]
        ctx, values = tables.context_batch(r, f, y)
        legal = tables.legal[ctx, f]
        points = tables.points[r, values]
        masks[rows, 32:] = legal
        for box in range(NUM_BOXES):
            fill = tables.fill(r, np.full(len(rows), box), values, u, y)
            out = np.stack(
                [fill.points, fill.bonus, fill.reward, fill.upper_total, fill.yahtzee_state], 1
            )
            fills[rows, box] = np.where(legal[:, box : box + 1], out, -1)
        bonus = tables.yahtzee_bonus(r, y) > 0
        threshold = rules.upper_bonus_threshold
        raw = encode_batch(r, rolls_left[rows], f, u, y, legal, points, threshold, bonus)
        obs[rows] = model_input(raw, 2, threshold)
    return {"masks": masks, "fills": fills, "obs": obs}


def python_games(policy, rules: str, draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Final cards ``[G, 16]`` (13 boxes, upper bonus, Yahtzee bonus, total) and near-tie
    counts of ``policy`` playing ``rules`` on ``draws`` (``[G, 39]``), the games in lockstep
    so that the network sees one batch a step (the same logits as one row at a time, up to
    float32 rounding: the tolerance)."""
    games = []
    for row in draws:
        game = Game(rules)
        game.reset(DrawSequence(row))
        games.append(game)
    near = np.zeros(len(games), dtype=np.int32)
    from yahtzee_env.game.observation import encode_seat

    while live := [i for i, g in enumerate(games) if not g.over]:
        obs = np.stack([encode_seat(games[i]) for i in live])
        masks = np.stack([games[i].legal_action_mask() for i in live])
        logits = np.where(policy._allowed(obs, masks), policy.logits(obs), -np.inf)
        top2 = -np.sort(-logits, axis=1)[:, :2]
        near[live] += (top2[:, 0] - top2[:, 1]) < TIE_TOLERANCE
        for i, action in zip(live, np.argmax(logits, axis=1), strict=True):
            games[i].step(int(action))
    finals = np.array(
        [
            [
                *(s for s in g.players[0].scores),
                g.players[0].upper_bonus,
                g.players[0].yahtzee_bonus,
                g.players[0].total,
            ]
            for g in games
        ],
        dtype=np.int32,
    )
    return finals, near


def start_node(
    work: Path, modules: Path, levels: list[str], states: np.ndarray, draws: np.ndarray, games: int
) -> subprocess.Popen:
    """Node plays the page's side in a child process (Python's side runs meanwhile)."""
    spec = {
        "modules": str(modules),
        "presets": PRESET_NAMES,
        "levels": [],
        "games": games,
        "tie_tolerance": TIE_TOLERANCE,
        "logits_rows": 2000,
    }
    for level in levels:
        manifest, blob = web_level(level)
        (work / manifest["weights_file"]).write_bytes(blob)
        spec["levels"].append({"manifest": manifest, "weights": manifest["weights_file"]})
    (work / "spec.json").write_text(json.dumps(spec))
    states.astype("<i4").tofile(work / "states.i32")
    draws.astype("<u2").tofile(work / "draws.u16")
    script = Path(__file__).with_name("offline_equality.mjs")
    return subprocess.Popen(
        [NODE, str(script), str(work)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish_node(work: Path, node: subprocess.Popen) -> dict:
    _, err = node.communicate(timeout=1800)
    assert node.returncode == 0, err[-3000:]
    return json.loads((work / "js_report.json").read_text())


def python_side(levels: list[str], states: np.ndarray, draws: np.ndarray, games: int) -> dict:
    """What Python says of the states and the games (the reference)."""
    py = python_states(states)
    py["games"] = []
    for k, (level, name) in enumerate((lv, p) for lv in levels for p in PRESET_NAMES):
        py["games"].append(
            python_games(load_opponent(level), name, draws[k * games : (k + 1) * games])
        )
    return py


def run_both(
    work: Path, modules: Path, levels: list[str], states: np.ndarray, draws: np.ndarray, games: int
) -> tuple[dict, dict]:
    """(Node's report, Python's side), the two computed at the same time."""
    node = start_node(work, modules, levels, states, draws, games)
    try:
        py = python_side(levels, states, draws, games)
    except BaseException:
        node.kill()
        raise
    return finish_node(work, node), py


def page_modules(tmp_path: Path, patch: tuple[str, str, str] | None = None) -> Path:
    """A copy of the page's modules that Node reads as ES modules (a package.json saying so;
    the page needs none), optionally with one edit (file, old text, new text)."""
    modules = tmp_path / "js"
    for sub in ("game", "policies"):
        shutil.copytree(STATIC_JS / sub, modules / sub)
    (modules / "package.json").write_text('{"type": "module"}\n')
    if patch:
        path = modules / patch[0]
        text = path.read_text()
        assert patch[1] in text
        path.write_text(text.replace(patch[1], patch[2]))
    return modules


def compare(work: Path, levels: list[str], states: np.ndarray, games: int, py: dict) -> dict:
    """Every check of the module docstring; returns the counts (raises AssertionError)."""
    read = lambda name, dtype: np.fromfile(work / name, dtype=dtype)  # noqa: E731
    # the tables
    py_dice = np.concatenate(
        [
            a.astype(np.int64).ravel()
            for a in (
                D.DICE,
                D.COUNTS,
                D.KEEP_COUNTS,
                D.HOLD_TO_KEEP,
                D.KEEP_CDF,
                D.CANONICAL_HOLDS,
            )
        ]
    )
    assert np.array_equal(read("js_dice.i32", "<i4"), py_dice), "the dice tables differ"
    bits = 1 << np.arange(NUM_BOXES)
    legal = [PRESETS[p].tables.legal.astype(np.int64) @ bits for p in PRESET_NAMES]
    py_rules = np.concatenate([NATURAL_SCORES.ravel(), *(t.ravel() for t in legal)])
    js_rules = read("js_rules.i32", "<i4")
    assert np.array_equal(js_rules[: NATURAL_SCORES.size], py_rules[: NATURAL_SCORES.size]), (
        "scores differ"
    )
    assert np.array_equal(js_rules, py_rules), "the legal boxes differ"
    # the states
    n = len(states)
    js_masks = read("js_masks.u8", np.uint8).reshape(n, 45)
    assert np.array_equal(js_masks, py["masks"]), (
        f"masks differ at {np.flatnonzero((js_masks != py['masks']).any(1))[:5]}"
    )
    js_fills = read("js_fills.i32", "<i4").reshape(n, NUM_BOXES, 5)
    bad = np.flatnonzero((js_fills != py["fills"]).any(axis=(1, 2)))
    assert not len(bad), f"fills differ at states {bad[:5]}: {states[bad[:1]]}"
    js_obs = read("js_obs.f32", "<f4").reshape(n, 86)
    assert np.allclose(js_obs, py["obs"], rtol=0, atol=1e-6), "observations differ"
    js_actions = read("js_actions.i8", np.int8).reshape(n, len(levels))
    js_logits = read("js_logits.f32", "<f4").reshape(-1, len(levels), 45)
    result = {"states": n, "logits_max_abs_diff": 0.0, "state_ties": {}, "state_disagreements": {}}
    for col, level in enumerate(levels):
        policy = load_opponent(level)
        logits = policy.logits(_raw(py["obs"]))
        allowed = policy._allowed(py["obs"][:, :72], py["masks"].astype(bool))
        logits = np.where(allowed, logits, -np.inf)
        ours = np.argmax(logits, axis=1)
        theirs = js_actions[:, col].astype(np.int64)
        assert allowed[np.arange(n), theirs].all(), f"{level}: the page chose a disallowed action"
        top2 = -np.sort(-logits, axis=1)[:, :2]
        differ = ours != theirs
        gap = logits[np.arange(n), ours] - logits[np.arange(n), theirs]
        assert (gap[differ] < TIE_TOLERANCE).all(), f"{level}: actions differ beyond a near tie"
        result["state_ties"][level] = int(((top2[:, 0] - top2[:, 1]) < TIE_TOLERANCE).sum())
        result["state_disagreements"][level] = int(differ.sum())
        rows = len(js_logits)
        plain = policy.logits(_raw(py["obs"][:rows]))
        result["logits_max_abs_diff"] = max(
            result["logits_max_abs_diff"], float(np.abs(plain - js_logits[:, col]).max())
        )
    # the games
    js_finals = read("js_finals.i32", "<i4").reshape(-1, 16)
    js_near = read("js_near_ties.i32", "<i4")
    result.update(games=0, games_diverged_at_tie=0, games_with_near_tie=0)
    for k, (level, name) in enumerate((lv, p) for lv in levels for p in PRESET_NAMES):
        block = slice(k * games, (k + 1) * games)
        finals, near = py["games"][k]
        same = (finals == js_finals[block]).all(axis=1)
        tie = (near > 0) | (js_near[block] > 0)
        differ = np.flatnonzero(~(same | tie))[:5]
        assert not len(differ), f"{level}/{name}: final cards differ with no near tie: {differ}"
        result["games"] += games
        result["games_diverged_at_tie"] += int((~same).sum())
        result["games_with_near_tie"] += int(tie.sum())
    return result


def _raw(obs86: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(obs86[:, :72])


def draws_for(count: int, seed: int) -> np.ndarray:
    return (
        np.random.default_rng(seed)
        .integers(0, D.ROLL_OUTCOMES, (count, MAX_ROLLS))
        .astype(np.uint16)
    )


@pytest.mark.slow
def test_the_page_plays_like_python(tmp_path):
    """The full check: 100,000 states, 1,000 games per offline level and preset."""
    levels = offline_levels()
    assert levels == ["easy", "medium", "hard", "expert"]
    games = 1000
    states = sample_states(100_000, seed=50)
    draws = draws_for(games * len(levels) * len(PRESETS), seed=51)
    started, cpu = time.perf_counter(), time.process_time()
    report, py = run_both(tmp_path, page_modules(tmp_path), levels, states, draws, games)
    result = compare(tmp_path, levels, states, games, py)
    seconds = {"wall": time.perf_counter() - started, "python_cpu": time.process_time() - cpu}
    print(json.dumps({"node": report, "python": result, "seconds": seconds}))
    # near ties are rare: bounded at 0.5% of the states and 1% of the games
    assert result["logits_max_abs_diff"] < 1e-4
    assert all(v <= 0.005 * len(states) for v in result["state_ties"].values()), result
    assert result["games_diverged_at_tie"] <= 0.01 * result["games"], result


def test_a_small_run_agrees(tmp_path):
    """The same checks at a small size (every level and preset, 20 games each)."""
    levels = offline_levels()
    states = sample_states(5_000, seed=7)
    draws = draws_for(20 * len(levels) * len(PRESETS), seed=8)
    _, py = run_both(tmp_path, page_modules(tmp_path), levels, states, draws, 20)
    result = compare(tmp_path, levels, states, 20, py)
    assert result["games"] == 20 * len(levels) * len(PRESETS)


@pytest.mark.parametrize(
    "patch",
    [
        ("game/rules.js", "FULL_HOUSE_POINTS = 25", "FULL_HOUSE_POINTS = 26"),
        ("game/rules.js", "upper_bonus_value: 35", "upper_bonus_value: 36"),
        ("game/rules.js", "if (!((filled >> face) & 1)) legal", "if (false) legal"),
        ("game/dice.js", "if (KEEP_CDF[base + mid] > r)", "if (KEEP_CDF[base + mid] >= r)"),
        (
            "game/observation.js",
            "clip((upper - 3 * filledFaces) / 21.0)",
            "clip((upper - 3 * filledFaces) / 20.0)",
        ),
    ],
    ids=["full-house", "upper-bonus", "forced-joker", "roll-table", "feature"],
)
def test_a_changed_rule_in_the_page_fails(tmp_path, patch):
    """The check is not blind: one changed rule in the page fails it."""
    levels = ["easy"]
    states = sample_states(2_000, seed=9)
    draws = draws_for(10 * len(PRESETS), seed=10)
    _, py = run_both(tmp_path, page_modules(tmp_path, patch), levels, states, draws, 10)
    with pytest.raises(AssertionError):
        compare(tmp_path, levels, states, 10, py)


@pytest.mark.parametrize(
    "preset",
    [RuleSet(upper_bonus_value=36), RuleSet(joker="free"), RuleSet(yahtzee_bonus_value=50)],
    ids=["upper-bonus", "joker", "yahtzee-bonus"],
)
def test_a_changed_rule_in_python_fails(tmp_path, monkeypatch, preset):
    """... and so does one changed rule on the Python side (its official preset replaced)."""
    states = sample_states(2_000, seed=11)
    draws = draws_for(10 * len(PRESETS), seed=12)
    node = start_node(tmp_path, page_modules(tmp_path), ["easy"], states, draws, 10)
    finish_node(tmp_path, node)
    monkeypatch.setitem(PRESETS, "official", preset)
    py = python_side(["easy"], states, draws, 10)
    with pytest.raises(AssertionError):
        compare(tmp_path, ["easy"], states, 10, py)
