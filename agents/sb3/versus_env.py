"""`YahtzeeVs-v0` at two seats, batched for PPO: N tables, an opponent drawn for each game.

`TableVecEnv` is Stable-Baselines3's `VecEnv` over ``N`` two-seat `engine.Game` tables; at
each table the learner plays one seat and an opponent the other, exactly as in
`yahtzee_env.envs.versus.YahtzeeVsEnv` (``reward="win"``): the same engine, the same table
observation (`seat_view.encode_table`: its own 72 floats, its total, the other card), the
opponents' turns played between the learner's moves through the same checks
(`cpu.cpu_action`'s rule: a table-reading opponent is shown both cards), and the same reward
(`seat_view.win_rewards`: +1 for the sole top total, 0 for a draw, -1 below, at the end only).
What batching adds: the opponents of all tables that are to move are asked together, one
``act_batch`` (or ``act_batch_table``) call per opponent per round, so the solver and the
networks cost a few microseconds a move instead of tens.

The learner sees `observation.model_input` of version 3 (`TABLE_INPUT_VERSION`: version 2 of
its own 72 floats, then the table's 21), canonical holds only (as ``hard`` was trained), and
the result times ``reward_scale``.

A table's game: the learner's seat alternates from one game to the next (table ``i`` starts at
seat ``i % 2``); its opponent is drawn at each reset from `OpponentMix` with the env's
generator: a fixed opponent (``hard``, ``optimal``, ...) or, with the weight of ``self``, one
of the learner's past selves (`SnapshotPool`, numpy copies of its policy). All dice come from
the same generator (``seed``), so the env's whole state is arrays and that generator's state:
`get_state` / `set_state` (exact resume, `resume`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from yahtzee_env.envs.seat_view import encode_table, win_rewards
from yahtzee_env.game.cpu import table_cards
from yahtzee_env.game.engine import NUM_ACTIONS, Game, IllegalActionError
from yahtzee_env.game.observation import (
    INPUT_SIZES,
    TABLE_INPUT_VERSION,
    encode_seat,
    model_input,
)
from yahtzee_env.game.rules import NUM_BOXES, RuleSet
from yahtzee_env.policies.models import MLPPolicy

SEATS = 2
SELF = "self"  # the mix's name for the learner's past selves


# ------------------------------------------------------------------------------ the pool
class SnapshotPool:
    """The learner's past selves: the newest ``size`` numpy copies of its policy, keyed by the
    env-step at which each was taken (adding to a full pool retires the oldest; a retired
    self still playing at some table is kept until its game ends). Which one plays a game is
    drawn by the env's generator (`OpponentMix.draw`), so the pool holds no randomness of its
    own. Its state (every kept snapshot's weights) is saved with each checkpoint."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"pool size must be >= 1, got {size}")
        self.size = size
        self.members: dict[int, MLPPolicy] = {}  # step -> policy: the pool and retired ones
        self.order: list[int] = []  # steps in the order taken; the pool is the last `size`

    def add(self, step: int, policy: MLPPolicy, live: set[int] = frozenset()) -> None:
        """Add the snapshot taken at ``step``; drop retired ones not in ``live``."""
        if step in self.members:
            return
        self.members[step] = policy
        self.order.append(step)
        keep = set(self.steps()) | set(live)
        self.order = [s for s in self.order if s in keep]
        self.members = {s: p for s, p in self.members.items() if s in keep}

    def steps(self) -> list[int]:
        """The pool: the steps of the newest ``size`` snapshots, oldest first."""
        return self.order[-self.size :]

    def state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """(arrays, facts) of every kept snapshot: its layers' weights and biases."""
        arrays: dict[str, np.ndarray] = {}
        facts: dict[str, Any] = {"size": self.size, "order": list(self.order), "members": []}
        for step, policy in self.members.items():
            for k, (w, b) in enumerate(policy.weights):
                arrays[f"{step}.w{k}"], arrays[f"{step}.b{k}"] = w, b
            facts["members"].append(
                {"step": step, "layers": len(policy.weights), "activation": policy.activation,
                 "threshold": policy.threshold}
            )  # fmt: skip
        return arrays, facts

    def restore(self, arrays: dict[str, np.ndarray], facts: dict[str, Any]) -> None:
        self.size = int(facts["size"])
        self.order = [int(s) for s in facts["order"]]
        self.members = {}
        for m in facts["members"]:
            step = int(m["step"])
            weights = [(arrays[f"{step}.w{k}"], arrays[f"{step}.b{k}"]) for k in range(m["layers"])]
            self.members[step] = snapshot_policy(weights, m["activation"], m["threshold"], step)


def snapshot_policy(weights, activation: str, threshold: int, step: int) -> MLPPolicy:
    """A past self: the learner's policy network as a deterministic numpy player."""
    return MLPPolicy(
        [(np.array(w), np.array(b)) for w, b in weights],
        activation,
        name=f"self@{step}",
        canonical_holds=True,
        input_version=TABLE_INPUT_VERSION,
        threshold=threshold,
    )


# ------------------------------------------------------------------------------ the mix
@dataclass
class OpponentMix:
    """Who sits across the table: ``fixed`` named policies and the pool of past selves, drawn
    for each game with probabilities ``weights`` (one per name of ``names``; ``self`` is the
    pool, drawn uniformly among its members)."""

    names: Sequence[str]
    weights: Sequence[float]
    fixed: dict[str, Any]
    pool: SnapshotPool | None

    def __post_init__(self) -> None:
        w = np.asarray(self.weights, dtype=np.float64)
        if len(self.names) != len(w) or not len(w) or (w < 0).any() or w.sum() <= 0:
            raise ValueError(f"opponent weights {list(self.weights)} for {list(self.names)}")
        self.cdf = np.cumsum(w / w.sum())
        for name in self.names:
            if name == SELF and self.pool is None:
                raise ValueError("the mix names 'self' but has no pool")
            if name != SELF and name not in self.fixed:
                raise ValueError(f"no policy for the opponent {name!r}")

    def draw(self, rng: np.random.Generator) -> str:
        """The opponent of a new game: a fixed name, or ``self@<step>`` (a pool member)."""
        name = self.names[min(int(np.searchsorted(self.cdf, rng.random(), side="right")),
                              len(self.names) - 1)]  # fmt: skip
        if name != SELF:
            return name
        steps = self.pool.steps()
        return f"{SELF}@{steps[int(rng.integers(len(steps)))]}"


# ------------------------------------------------------------------------------ the env
_PLAYER_INTS = ("filled", "upper_total", "yahtzee_state", "yahtzee_bonus", "yahtzees")
_GAME_INTS = ("first", "current", "roll", "rolls_left", "turns_taken", "over")


class TableVecEnv(VecEnv):
    """``num_envs`` two-seat tables of `YahtzeeVs-v0` (module docstring) as an SB3 `VecEnv`.

    Same-step autoreset, as SB3 expects: the step that ends a game returns the first
    observation of the next, the last one in ``infos[i]["terminal_observation"]``, and the
    finished game's facts: ``episode`` (``r`` the scaled result, ``l`` the learner's moves),
    ``result`` (+1, 0, -1), ``total``, ``opponent_total``, ``opponent``, ``seat``,
    ``upper_bonus`` and ``scorecard`` (int16[13], the learner's boxes).
    ``action_masks()`` gives ``bool [N, 45]`` (canonical holds)."""

    def __init__(
        self,
        num_envs: int,
        mix: OpponentMix,
        rules: str | RuleSet = "official",
        reward_scale: float = 1.0,
        seed: int = 0,
    ) -> None:
        self.rules = RuleSet.from_spec(rules)
        self.mix = mix
        self.reward_scale = float(reward_scale)
        self.threshold = self.rules.upper_bonus_threshold
        space = spaces.Box(-1.0, 1.0, (INPUT_SIZES[TABLE_INPUT_VERSION],), np.float32)
        self.render_mode = None
        super().__init__(num_envs, space, spaces.Discrete(NUM_ACTIONS))
        self.rng = np.random.default_rng(seed)
        self.games = [
            Game(self.rules, num_players=SEATS, canonical_holds=True) for _ in range(num_envs)
        ]
        self.seats = np.arange(num_envs) % SEATS  # the first game's seats; then they alternate
        self.opponents = [""] * num_envs  # the name of each table's opponent (`mix.draw`)
        self.lengths = np.zeros(num_envs, dtype=np.int64)
        self._actions: np.ndarray | None = None
        self._started = False

    # ------------------------------------------------------------------------- VecEnv API
    def reset(self) -> np.ndarray:
        for i in range(self.num_envs):
            self._new_game(i, first=True)
        self._play_opponents(range(self.num_envs))
        self._started = True
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self._observe(range(self.num_envs))

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self):
        if self._actions is None:
            raise RuntimeError("step_wait() called without step_async()")
        actions, self._actions = self._actions.tolist(), None
        n = self.num_envs
        for i, action in enumerate(actions):
            game = self.games[i]
            if game.current != self.seats[i] or game.over:  # pragma: no cover - invariant
                raise IllegalActionError(f"table {i}: not the learner's move")
            game.step(int(action))  # raises IllegalActionError on an illegal action
        self._play_opponents(range(n))
        rewards = np.zeros(n, dtype=np.float32)
        dones = np.zeros(n, dtype=bool)
        infos: list[dict[str, Any]] = [{} for _ in range(n)]
        self.lengths += 1
        ended = [i for i in range(n) if self.games[i].over]
        for i in ended:
            game, seat = self.games[i], int(self.seats[i])
            result = win_rewards(game.totals())[seat]
            rewards[i] = result * self.reward_scale
            dones[i] = True
            card, other = game.players[seat], game.players[1 - seat]
            scorecard = np.array([-1 if s is None else s for s in card.scores], dtype=np.int16)
            infos[i] = {
                "terminal_observation": self._observe([i])[0],
                "episode": {
                    "r": float(rewards[i]),
                    "l": int(self.lengths[i]),
                    "t": 0.0,
                },
                "result": int(result),
                "total": int(card.total),
                "opponent_total": int(other.total),
                "opponent": self.opponents[i],
                "seat": seat,
                "upper_bonus": int(card.upper_bonus),
                "scorecard": scorecard,
                "TimeLimit.truncated": False,
            }
            self.lengths[i] = 0
            self._new_game(i)
        if ended:
            self._play_opponents(ended)
        return self._observe(range(n)), rewards, dones, infos

    def close(self) -> None:
        pass

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        return [seed] * self.num_envs

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        return [getattr(self, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *args: Any, indices=None, **kwargs: Any) -> list[Any]:
        if method_name != "action_masks":
            raise AttributeError(f"TableVecEnv has no per-table method {method_name!r}")
        masks = self.action_masks()
        return [masks[i] for i in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices=None) -> list[bool]:
        from stable_baselines3.common.monitor import Monitor

        wrapped = isinstance(wrapper_class, type) and issubclass(Monitor, wrapper_class)
        return [wrapped for _ in self._get_indices(indices)]

    def action_masks(self) -> np.ndarray:
        """bool [N, 45]: the learner's legal actions at each table (canonical holds)."""
        return np.stack([game.legal_action_mask() for game in self.games])

    # ------------------------------------------------------------------------- internals
    def _new_game(self, i: int, first: bool = False) -> None:
        if not first:
            self.seats[i] = 1 - self.seats[i]
        self.opponents[i] = self.mix.draw(self.rng)
        self.games[i].reset(self.rng, first=0)

    def _policy(self, name: str) -> Any:
        if name.startswith(f"{SELF}@"):
            return self.mix.pool.members[int(name.split("@", 1)[1])]
        return self.mix.fixed[name]

    def _play_opponents(self, rows: Sequence[int] | range) -> None:
        """Play the opponents' moves at ``rows`` until the learner is to move (or the game
        is over): one batched call per opponent per round."""
        pending = [i for i in rows if self._opponent_to_move(i)]
        while pending:
            groups: dict[str, list[int]] = {}
            for i in pending:
                groups.setdefault(self.opponents[i], []).append(i)
            for name in sorted(groups):
                members = groups[name]
                policy = self._policy(name)
                games = [self.games[i] for i in members]
                obs = np.stack([encode_seat(g, g.current) for g in games])
                masks = np.stack([g.legal_action_mask() for g in games])
                if getattr(policy, "reads_table", False):
                    cards = np.array([table_cards(g, g.current) for g in games], dtype=np.int64)
                    actions = policy.act_batch_table(obs, masks, cards)
                else:
                    actions = policy.act_batch(obs, masks)
                actions = np.asarray(actions, dtype=np.int64)
                if not masks[np.arange(len(members)), actions].all():
                    bad = int(np.flatnonzero(~masks[np.arange(len(members)), actions])[0])
                    raise IllegalActionError(
                        f"opponent {name!r} chose the illegal action {int(actions[bad])} "
                        f"at table {members[bad]}"
                    )
                for g, a in zip(games, actions.tolist(), strict=True):
                    g.step(a)
            pending = [i for i in pending if self._opponent_to_move(i)]

    def _opponent_to_move(self, i: int) -> bool:
        game = self.games[i]
        return not game.over and game.current != self.seats[i]

    def _observe(self, rows: Sequence[int] | range) -> np.ndarray:
        table = np.stack([encode_table(self.games[i], int(self.seats[i])) for i in rows])
        return model_input(table, TABLE_INPUT_VERSION, self.threshold)

    def live_snapshots(self) -> set[int]:
        """Steps of the past selves playing at some table now (kept while they play)."""
        return {int(o.split("@", 1)[1]) for o in self.opponents if o.startswith(f"{SELF}@")}

    # ------------------------------------------------------------------------- exact resume
    def get_state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """(arrays, facts): every table's game (both cards, dice, the dice buffer), seats,
        opponents, episode counters and the generator; `set_state` continues exactly."""
        n = self.num_envs
        players = np.zeros((n, SEATS, len(_PLAYER_INTS)), dtype=np.int64)
        scores = np.full((n, SEATS, NUM_BOXES), -1, dtype=np.int64)
        games = np.zeros((n, len(_GAME_INTS)), dtype=np.int64)
        pending: list[list[int]] = []
        for i, game in enumerate(self.games):
            for s, card in enumerate(game.players):
                players[i, s] = [getattr(card, f) for f in _PLAYER_INTS]
                scores[i, s] = [-1 if v is None else v for v in card.scores]
            games[i] = [int(getattr(game, f)) for f in _GAME_INTS]
            # a run that never stepped (a warm start and no PPO) has no roller yet
            pending.append([] if game.roller is None else list(game.roller._pending))
        lengths = np.array([len(p) for p in pending], dtype=np.int64)
        arrays = {
            "players": players,
            "scores": scores,
            "games": games,
            "dice_buffer": np.array([v for p in pending for v in p], dtype=np.int64),
            "dice_buffer_lengths": lengths,
            "seats": np.array(self.seats),
            "lengths": np.array(self.lengths),
        }
        facts = {
            "num_envs": n,
            "rules": self.rules.name,
            "opponents": list(self.opponents),
            "generator": self.rng.bit_generator.state,
            "started": self._started,
        }
        return arrays, facts

    def set_state(self, arrays: dict[str, np.ndarray], facts: dict[str, Any]) -> None:
        if (facts["num_envs"], facts["rules"]) != (self.num_envs, self.rules.name):
            raise ValueError(
                f"state of {facts['num_envs']} tables of rules {facts['rules']!r}, not "
                f"{self.num_envs} of {self.rules.name!r}"
            )
        self.rng = np.random.default_rng()
        self.rng.bit_generator.state = facts["generator"]
        offsets = np.concatenate([[0], np.cumsum(arrays["dice_buffer_lengths"])])
        buffer = arrays["dice_buffer"].tolist()
        for i, game in enumerate(self.games):
            game.reset(self.rng, first=0)  # fresh cards and a roller on the restored generator
            game.roller._pending = buffer[offsets[i] : offsets[i + 1]]
            for s, card in enumerate(game.players):
                for f, v in zip(_PLAYER_INTS, arrays["players"][i, s].tolist(), strict=True):
                    setattr(card, f, int(v))
                card.scores = [None if v < 0 else int(v) for v in arrays["scores"][i, s].tolist()]
            for f, v in zip(_GAME_INTS, arrays["games"][i].tolist(), strict=True):
                setattr(game, f, bool(v) if f == "over" else int(v))
        self.rng.bit_generator.state = facts["generator"]  # reset drew nothing; be explicit
        self.seats = np.array(arrays["seats"], dtype=np.int64)
        self.lengths = np.array(arrays["lengths"], dtype=np.int64)
        self.opponents = list(facts["opponents"])
        self._started = bool(facts["started"])


# ------------------------------------------------------------------------------ from a config
def make_table_env(cfg: Any, seed: int) -> TableVecEnv:
    """The env of a ``YahtzeeVs-v0`` run config (``versus`` section): its fixed opponents
    resolved by name (`resolve_policy`, seeded by ``seed``), an empty pool of past selves
    if the mix names ``self`` (the run adds its step-0 snapshot before the first game)."""
    from yahtzee_env.policies.resolve import resolve_policy

    v = cfg.versus
    names = [o.name for o in v.opponents]
    fixed = {n: resolve_policy(n, cfg.env.rules, seed) for n in names if n != SELF}
    for name, policy in fixed.items():  # its own generator would not be in the checkpoints
        if getattr(policy, "stochastic", False):
            raise ValueError(
                f"versus.opponents: {name!r} draws from a generator of its own; the opponents "
                "must be deterministic for the run to resume exactly"
            )
    pool = SnapshotPool(v.pool_size) if SELF in names else None
    mix = OpponentMix(names, [o.weight for o in v.opponents], fixed, pool)
    return TableVecEnv(
        cfg.env.num_envs, mix, rules=cfg.env.rules, reward_scale=cfg.env.reward_scale, seed=seed
    )


def take_snapshot(model: Any, env: TableVecEnv, step: int) -> None:
    """Add the learner's policy now to the env's pool as the past self of ``step``."""
    from ..export import policy_weights

    if env.mix.pool is None:
        return
    weights, activation = policy_weights(model)
    policy = snapshot_policy(weights, activation, env.threshold, step)
    env.mix.pool.add(step, policy, live=env.live_snapshots())
