"""A recorded game of `Yahtzee-v0` that must replay exactly (any change to dice, rules,
rewards or the step API shows up here as a diff of ``tests/golden/official_seed42.txt``).

The game: official rules, ``reset(seed=42)``, a fixed deterministic policy (keep the dice of
the most common face, the highest on ties, while re-rolls remain and the dice are not a
Yahtzee; then fill the legal box that scores most, the first on ties). Each line is one step:
the dice and re-rolls left when the action was chosen, the action, its reward and the total.

If a change to the game is intended, regenerate the file and review the diff::

    .venv/bin/python tests/test_golden.py > tests/golden/official_seed42.txt
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import gymnasium as gym
import numpy as np

import yahtzee_env  # noqa: F401  (registers Yahtzee-v0)
from yahtzee_env.game.engine import BOX_ACTION_OFFSET, describe_action
from yahtzee_env.game.rules import BOX_NAMES

GOLDEN = Path(__file__).parent / "golden" / "official_seed42.txt"
SEED = 42


def choose(dice: tuple[int, ...], rolls_left: int, obs: np.ndarray, mask: np.ndarray) -> int:
    counts = Counter(dice)
    if rolls_left > 0 and len(counts) > 1:
        face = max(counts, key=lambda f: (counts[f], f))
        return sum(1 << i for i, d in enumerate(dice) if d == face)
    points = np.where(mask[BOX_ACTION_OFFSET:], obs[52:65], -1.0)  # legal points / 50
    return BOX_ACTION_OFFSET + int(np.argmax(points))


def transcript() -> str:
    env = gym.make("Yahtzee-v0", rules="official")
    obs, info = env.reset(seed=SEED)
    lines = [
        f"# Yahtzee-v0 golden game: rules=official seed={SEED} "
        "policy=keep-most-common-face-then-best-box",
        "# step | dice | rolls_left | action | reward | total",
    ]
    terminated, step = False, 0
    while not terminated:
        dice, rolls_left = info["dice"], info["rolls_left"]
        action = choose(dice, rolls_left, obs, env.unwrapped.action_masks())
        obs, reward, terminated, truncated, info = env.step(action)
        assert not truncated
        lines.append(
            f"{step:3d} | {' '.join(map(str, dice))} | {rolls_left} | "
            f"{action:2d} {describe_action(action):<22} | {reward:5.1f} | {info['total']}"
        )
        step += 1
    scores = zip(BOX_NAMES, info["scorecard"].tolist(), strict=True)
    lines.append("# scorecard: " + " ".join(f"{k}={v}" for k, v in scores))
    lines.append(
        f"# upper_total={info['upper_total']} upper_bonus={info['upper_bonus']} "
        f"yahtzee_bonus={info['yahtzee_bonus']} total={info['total']}"
    )
    return "\n".join(lines) + "\n"


def test_golden_game_replays_exactly():
    expected = GOLDEN.read_text()
    got = transcript()
    assert got == expected, "the recorded game changed; see the module docstring"


def test_golden_game_is_a_complete_game():
    lines = [line for line in GOLDEN.read_text().splitlines() if not line.startswith("#")]
    boxes = [line for line in lines if "box:" in line]
    assert len(boxes) == 13
    rewards = sum(float(line.split("|")[4]) for line in lines)
    assert rewards == float(lines[-1].split("|")[5])


if __name__ == "__main__":
    sys.stdout.write(transcript())
