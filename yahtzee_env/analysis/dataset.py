"""Offline-RL datasets of optimal or level play (``yahtzee dataset``), in Minari's format.

    from yahtzee_env.analysis.dataset import write_dataset
    path = write_dataset("optimal", games=1_000, out="datasets")   # yahtzee/optimal-v0
    # then: MINARI_DATASETS_PATH=datasets python -c "import minari; minari.load_dataset(...)"

Each episode is one solitaire game of `Yahtzee-v0` (official rules unless asked), reset with
seed ``seed + i`` for game ``i``: the observations (72 floats), the actions (0-44), the rewards,
terminations and truncations, and in ``infos`` the env's info of every step (``action_mask``,
dice, scorecard, totals). For the optimal policy the infos add ``action_values``: the exact
solver's expected final score-to-go of each of the 45 actions (-inf where illegal), so a
dataset holds the Q-values of the optimal policy at every state it visits. Needs the
``dataset`` extra (minari and pyarrow); nothing is downloaded.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

MAX_GAMES = 1_000_000


class ActionValues(gym.Wrapper):
    """Adds ``info["action_values"]`` (float32[45], the solver's value of each action, -inf
    where illegal) to every reset and step."""

    def __init__(self, env: gym.Env, table: Any) -> None:
        super().__init__(env)
        from yahtzee_env.solver.oracle import OptimalOracle

        self.oracle = OptimalOracle(table)

    def _values(self, obs: np.ndarray) -> np.ndarray:
        return self.oracle.action_values(np.asarray(obs, dtype=np.float32)[None])[0]

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        return obs, {**info, "action_values": self._values(obs)}

    def step(self, action: Any):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, {**info, "action_values": self._values(obs)}


@contextlib.contextmanager
def datasets_root(path: str | os.PathLike) -> Iterator[None]:
    """Minari's datasets folder (``MINARI_DATASETS_PATH``) set to ``path`` for the block."""
    old = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(Path(path).resolve())
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = old


def dataset_id(policy: str, rules: str = "official") -> str:
    suffix = "" if rules == "official" else f"-{rules}"
    return f"yahtzee/{policy}{suffix}-v0"


def write_dataset(
    policy: str,
    games: int,
    out: str | os.PathLike,
    *,
    seed: int = 0,
    rules: str = "official",
) -> Path:
    """Play ``games`` games of ``policy`` (``optimal`` or a level or built-in name) and write
    them as the Minari dataset `dataset_id` under ``out``; returns the dataset's folder."""
    import minari

    from yahtzee_env.analysis.protocol import package_version

    version = package_version()
    from yahtzee_env.game.rules import RuleSet
    from yahtzee_env.policies.knowledge import knowledge_of, track
    from yahtzee_env.policies.resolve import resolve_policy

    if not 1 <= games <= MAX_GAMES:
        raise ValueError(f"games must be in 1..{MAX_GAMES:,}, got {games:,}")
    rules = RuleSet.from_spec(rules)
    player = resolve_policy(policy, rules, seed)
    env: gym.Env = gym.make("Yahtzee-v0", rules=rules.name)
    if policy == "optimal":
        from yahtzee_env.solver.exact import load_or_solve

        env = ActionValues(env, load_or_solve(rules))
    knew = knowledge_of(player)
    name = dataset_id(policy, rules.name)
    with datasets_root(out):
        if name in minari.list_local_datasets():
            raise ValueError(f"{Path(out) / name}: the dataset exists; remove it or choose --out")
        episodes = [
            _play_episode(env, player, i, seed + i, with_values=policy == "optimal")
            for i in range(games)
        ]
        description = (
            f"{games:,} games of Yahtzee-v0 ({rules.name} rules) played by {policy} "
            f"(track: {track(knew)}), game i reset with seed {seed} + i. infos hold the env's "
            "info (action_mask, dice, scorecard, totals)"
            + (
                "; action_values is the exact solver's expected final score-to-go of each "
                "action (-inf where illegal)."
                if policy == "optimal"
                else "."
            )
        )
        minari.create_dataset_from_buffers(
            dataset_id=name,
            buffer=episodes,
            env=env.unwrapped.spec,
            eval_env=env.unwrapped.spec,
            algorithm_name=f"{policy} (yahtzee-rl {version})",
            author="yahtzee-rl",
            code_permalink="yahtzee dataset",
            description=description,
            data_format="arrow",
            requirements=[f"yahtzee-rl=={version}"],
        )
        return Path(out) / name


def _play_episode(env: gym.Env, player: Any, index: int, seed: int, with_values: bool):
    """One game as a Minari `EpisodeBuffer` (built directly: Minari's own collector needs
    jax to append steps)."""
    from minari.data_collector import EpisodeBuffer

    obs, info = env.reset(seed=seed)
    observations, actions, rewards, terminations, truncations = [obs], [], [], [], []
    infos: dict[str, list] = {k: [v] for k, v in info.items()}
    done = False
    while not done:
        action = int(player.act(obs, info["action_mask"]))
        obs, reward, terminated, truncated, info = env.step(action)
        observations.append(obs)
        actions.append(action)
        rewards.append(float(reward))
        terminations.append(bool(terminated))
        truncations.append(bool(truncated))
        for key, value in info.items():
            infos[key].append(value)
        done = terminated or truncated
    return EpisodeBuffer(
        id=index,
        seed=seed,
        observations=observations,
        actions=actions,
        rewards=rewards,
        terminations=terminations,
        truncations=truncations,
        infos={k: _info_column(v) for k, v in infos.items()},
    )


def _info_column(values: list) -> Any:
    """A step info's values over the episode: an array [T, ...] for array entries, a plain
    list for scalars (Minari's arrow storage reads a 1-D array back with no shape)."""
    arrays = [np.asarray(v) for v in values]
    if arrays[0].ndim == 0:
        return [a.item() for a in arrays]
    return np.stack(arrays)
