"""Typed training configs: a YAML file maps one-to-one onto these dataclasses.

An unknown key, a value of the wrong type or an impossible value fails in `load_config`,
before anything is trained, with an error that names the key (``ppo.batch_size: ...``).
`apply_overrides` takes ``--set section.key=value`` strings (values parsed as YAML).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Union

import yaml

from yahtzee_env.game.rules import PRESETS

_FLOAT_TEXT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


class ConfigError(ValueError):
    """A config that cannot be trained; the message starts with the offending key."""


FOLLOW_TOTAL = "total_timesteps"
SCHEDULED = ("learning_rate", "clip_range", "ent_coef")
"""The PPO settings that may be a `Schedule`."""


@dataclass
class Schedule:
    """A value that goes linearly from ``start`` (env-step 0) to ``end`` (env-step ``steps``)
    and stays at ``end`` after: ``{start: 1e-3, end: 1e-5, steps: 40000000}``.

    ``steps`` is the schedule's length in env-steps, written in the config, so that changing
    ``train.total_timesteps`` (a shorter trial, an extended run) never changes the value at a
    given step. ``steps: total_timesteps`` says instead that the schedule stretches to the
    run's length; such a run cannot be extended (the rate would jump), and says so. Its value
    at a step, for every trainer: `yahtzee_agents.run.schedule`.
    """

    start: float
    end: float
    steps: int | Literal["total_timesteps"]
    kind: Literal["linear"] = "linear"

    def length(self, total_timesteps: int) -> int:
        return total_timesteps if self.steps == FOLLOW_TOTAL else int(self.steps)


def canonical_digest(data: dict[str, Any]) -> str:
    """sha256 of ``data`` as canonical JSON (sorted keys): the config hash of exported models."""
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


# ------------------------------------------------------------------------------ digest
# A config's digest (``config_sha256`` in run folders and level manifests) is the sha256 of its
# *canonical form*, and that form is versioned, so that a digest once recorded keeps verifying
# while the dataclasses below grow and rename fields:
#
# - a field written by a version is always in its form, under the name it had in that version
#   (`RENAMED`);
# - any other field (one that joined later, or one added tomorrow) is left out while it holds
#   the value that gives the behaviour runs had before it existed (`OMITTED_AT`; by default the
#   field's default). Adding a field at such a default changes no digest; a field whose
#   default changes must keep its old value in `OMITTED_AT` (tests/test_provenance.py pins them).
#
# Versions: 0 until the reward-only recipe (0a5b97f), 1 until `reward_only` became `teacher`
# (fd31896), 2 since. A record without ``config_digest_version`` holds one of 0-2.

DIGEST_VERSION = 2
"""The canonical form that `RunConfig.digest` computes by default, recorded as
``config_digest_version`` beside ``config_sha256``."""

_WRITTEN_FROM: dict[int, dict[str, str]] = {
    0: {
        "RunConfig": "name level description env policy ppo warm_start train",
        "EnvConfig": "id rules canonical_holds num_envs reward_scale",
        "PolicyConfig": "net_arch vf_arch activation",
        "PPOConfig": "learning_rate n_steps batch_size n_epochs gamma gae_lambda clip_range "
        "clip_range_vf normalize_advantage ent_coef vf_coef max_grad_norm target_kl",
        "Schedule": "start end kind",
        "WarmStartConfig": "teacher games epochs batch_size learning_rate temperature explore",
        "TrainConfig": "total_timesteps seed eval_interval eval_games eval_seed "
        "checkpoint_interval keep_checkpoints torch_threads",
        # yahtzee_agents.model_based's config (the master level's), digested by the same rules
        "ModelBasedConfig": "rules seed games games_per_iteration explore hidden learning_rate "
        "epochs batch_size buffer_states eval_every eval_games eval_seed",
    },
    1: {"RunConfig": "teacher", "EnvConfig": "observation_version shaping shaping_weight"},
    2: {
        "Schedule": "steps",
        "VersusConfig": "opponents snapshot_interval pool_size value_warmup eval_opponent",
        "OpponentWeight": "name weight",
    },
}
"""The fields each digest version writes always, by the version that first wrote them (as
``Class: "field field ..."``). Frozen: a field added from now on joins no version."""

OMITTED_AT: dict[str, Any] = {
    "RunConfig.teacher": None,
    "RunConfig.versus": None,
    "EnvConfig.observation_version": 1,
    "EnvConfig.shaping": "none",
    "EnvConfig.shaping_weight": 1.0,
    "PolicyConfig.init": None,
    "PPOConfig.anchor_kl": 0.0,
    "PPOConfig.anchor_release": 0,
    "Schedule.steps": FOLLOW_TOTAL,
    "TrainConfig.engine": "sb3",
}
"""``Class.field`` -> the value at which a field is left out of a version that does not write
it: the behaviour before the field existed (a schedule without ``steps`` followed
``train.total_timesteps``). A field not named here is left out at its default."""


@dataclass(frozen=True)
class Renamed:
    """A key's older name: ``reward_only: true`` is ``teacher: none``."""

    new: str
    """The field's name now (on the same dataclass)."""
    values: tuple[tuple[Any, Any], ...] | None
    """Old value -> new value, for every value the old key could hold (None: the same
    values under a new name)."""
    since: int
    """The first digest version whose canonical form writes the new name; older versions
    write the old name and value. A rename from now on says ``DIGEST_VERSION + 1``: every
    digest keeps the old name, so none changes."""
    hint: str = ""


RENAMED: dict[str, dict[str, Renamed]] = {
    "RunConfig": {
        "reward_only": Renamed(
            "teacher", ((True, "none"), (False, None)), since=2, hint="(true: `teacher: none`)"
        ),
    },
}
"""Class -> old key -> `Renamed`: the one table of renamed keys, read by `config_from_dict`
(an older ``config.yaml`` loads) and by `canonical_form` (an older digest verifies)."""


def _written(cls_name: str, version: int) -> set[str]:
    return {
        name
        for since, classes in _WRITTEN_FROM.items()
        if since <= version
        for name in classes.get(cls_name, "").split()
    }


def _omitted_value(cls_name: str, f: dataclasses.Field) -> Any:
    key = f"{cls_name}.{f.name}"
    if key in OMITTED_AT:
        return OMITTED_AT[key]
    if f.default_factory is not dataclasses.MISSING:
        return _plain(f.default_factory())
    return _plain(f.default) if f.default is not dataclasses.MISSING else dataclasses.MISSING


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def canonical_form(obj: Any, version: int = DIGEST_VERSION, old_names: bool = True) -> Any:
    """The plain data that digest ``version`` hashes: each dataclass's fields that ``version``
    writes, plus every other field that does not hold its omitted value (`OMITTED_AT`); with
    ``old_names``, a field renamed since ``version`` under its name and value of then."""
    if isinstance(obj, list):
        return [canonical_form(item, version, old_names) for item in obj]
    if not (dataclasses.is_dataclass(obj) and not isinstance(obj, type)):
        return obj
    if not 0 <= version <= DIGEST_VERSION:
        raise ValueError(f"config digest version {version}: known are 0-{DIGEST_VERSION}")
    cls_name = type(obj).__name__
    written = _written(cls_name, version)
    renamed_back = {
        r.new: (old, r) for old, r in RENAMED.get(cls_name, {}).items() if version < r.since
    }
    data: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if f.name not in written and _plain(value) == _omitted_value(cls_name, f):
            continue
        name, plain = f.name, canonical_form(value, version, old_names)
        if old_names and f.name in renamed_back:
            old, r = renamed_back[f.name]
            back = [plain] if r.values is None else [o for o, n in r.values if n == plain]
            if back:  # a value the old key could say; otherwise the new key stays
                name, plain = old, back[0]
        data[name] = plain
    return data


def digest_version_of(cfg: Any, sha256: str) -> int | None:
    """The digest version (newest first) whose canonical form of ``cfg`` has ``sha256``, or
    None: how a record without ``config_digest_version`` is checked."""
    for version in range(DIGEST_VERSION, -1, -1):
        if canonical_digest(canonical_form(cfg, version)) == sha256:
            return version
    return None


ENV_IDS = ("Yahtzee-v0", "YahtzeeVs-v0")


@dataclass
class EnvConfig:
    id: str = "Yahtzee-v0"
    """Gymnasium id of the environment: ``Yahtzee-v0`` (solitaire, the native vector env) or
    ``YahtzeeVs-v0`` (a 2-seat table, the result as the reward: the ``versus`` section)."""
    rules: str = "official"
    """Rules preset name (see `yahtzee_env.game.rules.PRESETS`)."""
    canonical_holds: bool = True
    """Mask all but one hold per distinct kept multiset, and keep-all (a learning aid)."""
    num_envs: int = 64
    """Games played in parallel by the vector env."""
    reward_scale: float = 0.01
    """Rewards are multiplied by this for learning (returns of ~250 points become ~2.5)."""
    observation_version: int = 1
    """The network's input (`yahtzee_env.game.observation.model_input`): 1 is the 72-float
    observation, 2 appends the rules-only strategy features, 3 (``YahtzeeVs-v0`` only) is
    version 2 plus the 2-seat table's 21 floats (the learner's total, the other card)."""
    shaping: Literal["none", "upper-bonus"] = "none"
    """Potential-based reward shaping (Ng et al. 1999; leaves the optimal policy unchanged):
    `upper-bonus` pays the upper bonus in advance, Phi(s) = weight * bonus * min(upper /
    threshold, 1) while the bonus is not yet earned, Phi = 0 at the end of a game."""
    shaping_weight: float = 1.0
    """The weight of Phi (see `shaping`)."""


@dataclass
class PolicyConfig:
    net_arch: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the policy network."""
    vf_arch: list[int] | None = None
    """Hidden layer sizes of the value network (None: same as net_arch, separate weights)."""
    activation: Literal["relu", "tanh"] = "relu"
    init: str | None = None
    """Start the policy network from a model's weights: a shipped level (``hard``) or a model
    manifest path, of the same hidden sizes and activation. Where this network reads more
    inputs than that one (version 3 after version 2), the first layer is widened with zero
    columns for the new inputs, so at step 0 it plays exactly as that model. The value
    network starts afresh (see ``versus.value_warmup``). None: random initialisation."""


@dataclass
class OpponentWeight:
    name: str
    """A policy name (`yahtzee_env.policies.resolve`: ``hard``, ``optimal``, a manifest path)
    or ``self`` (the learner's past selves, `versus.pool_size` of them)."""
    weight: float
    """The probability of drawing this opponent for a game, up to normalisation."""


@dataclass
class VersusConfig:
    """A 2-seat table of ``YahtzeeVs-v0`` (`yahtzee_agents.sb3.versus_env`): the result (+1 sole
    top, 0 draw, -1 below, times ``env.reward_scale``) is the only reward; the learner's seat
    alternates from game to game; the opponent of each game is drawn from ``opponents`` with
    the env's seeded generator."""

    opponents: list[OpponentWeight] = field(
        default_factory=lambda: [
            OpponentWeight("hard", 1.0),
            OpponentWeight("optimal", 1.0),
            OpponentWeight("self", 1.0),
        ]
    )
    snapshot_interval: int = 2_000_000
    """Env-steps between two snapshots of the learner added to its pool of past selves (the
    first at step 0; a snapshot is taken at the first PPO rollout boundary at or after each
    multiple)."""
    pool_size: int = 8
    """Past selves kept (the newest; a retired one finishes the games it is playing)."""
    value_warmup: int = 0
    """Env-steps at the start during which only the value network learns (the policy, taken
    from ``policy.init``, is frozen until its critic knows the new reward)."""
    eval_opponent: str = "hard"
    """The evaluations play ``train.eval_games`` deals against it at both seats (the
    multi-player protocol's `play_rotated`, seed ``train.eval_seed``): the win rate (draws
    1/2) picks ``best/``."""


@dataclass
class PPOConfig:
    """Arguments of `sb3_contrib.MaskablePPO`, same names and meanings."""

    learning_rate: float | Schedule = 3e-4
    """A constant, or a `Schedule` ``{start, end, steps}`` over env-steps."""
    n_steps: int = 128
    batch_size: int = 2048
    n_epochs: int = 4
    gamma: float = 1.0
    gae_lambda: float = 0.95
    clip_range: float | Schedule = 0.2
    clip_range_vf: float | None = None
    normalize_advantage: bool = True
    ent_coef: float | Schedule = 0.0
    """A constant, or a `Schedule` over env-steps: the coefficient of each PPO update is the
    schedule's value at the step count when its rollout ends."""
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float | None = None
    anchor_kl: float = 0.0
    """Not MaskablePPO's: the coefficient of a KL penalty, KL(init || policy) over each
    minibatch's legal actions, that holds the policy near the network it started from
    (``policy.init``; `yahtzee_agents.sb3.anchor`). 0 (the default) leaves it out: plain
    MaskablePPO."""
    anchor_release: int = 0
    """The anchor lets go of the learner's last ``anchor_release`` turns (0-12): states where
    it has that many open boxes or fewer are not penalised, so the policy is held near its
    start where the result says little about a move (the early game) and free where it says
    most. 0 (the default): every state is anchored."""


@dataclass
class WarmStartConfig:
    """Supervised pre-training of the policy (and value) before PPO, from a teacher policy."""

    teacher: Literal["none", "optimal", "heuristic", "duelist"] = "none"
    """Who to imitate: `optimal` (the exact solver, soft targets from its action values),
    `heuristic` (the built-in heuristic's actions), `duelist` (at a 2-seat table only: the
    duelist's moves, the solver's plus its exact win-probability search over its last turns)
    or `none` (PPO from scratch)."""
    games: int = 20_000
    """Teacher games whose decisions make the training set."""
    epochs: int = 10
    batch_size: int = 4096
    learning_rate: float = 1e-3
    temperature: float = 1.0
    """Soft targets softmax(Q / temperature) over legal actions (optimal teacher, in points)."""
    explore: float = 0.0
    """Probability that the teacher's games take a random legal action (more varied states)."""


@dataclass
class TrainConfig:
    total_timesteps: int = 1_000_000
    seed: int = 0
    eval_interval: int = 200_000
    """Evaluate every this many env steps (0: only at the end)."""
    eval_games: int = 2_000
    eval_seed: int = 12_345
    """Evaluation games use fixed seeds, the same at every evaluation."""
    checkpoint_interval: int = 200_000
    keep_checkpoints: int = 3
    torch_threads: int = 1
    """Threads of torch (sb3)."""
    engine: Literal["sb3", "jax"] = "sb3"
    """What trains the recipe (`yahtzee_agents.train`; both write the run folder of
    `yahtzee_agents.run`): ``sb3`` (MaskablePPO in torch on the native vector env) or ``jax``
    (PPO in JAX on `yahtzee_env.jax`, acting and learning in one compiled program:
    `yahtzee_agents.jax.ppo`).
    Left out of digests while ``sb3``: every run before it was an SB3 run."""


@dataclass
class RunConfig:
    name: str
    """Run name: the run folder is runs/<name>."""
    level: str | None = None
    """The level a run made, recorded by its run's own config (a level's manifest records that
    config's digest); the recipes in ``configs/`` leave it out (informational: export names a
    level with ``--level``)."""
    teacher: Literal["none", "optimal", "heuristic", "duelist"] | None = None
    """The recipe's teacher, checked against ``warm_start.teacher``: ``none`` refuses any
    teacher (no imitation, no solver values); unset: whatever the warm start says. (Older
    configs wrote ``reward_only: true`` for ``teacher: none``; they are read as that.)"""
    description: str = ""
    env: EnvConfig = field(default_factory=EnvConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    warm_start: WarmStartConfig = field(default_factory=WarmStartConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    versus: VersusConfig | None = None
    """The 2-seat table (``env.id: YahtzeeVs-v0`` only)."""

    def to_dict(self) -> dict[str, Any]:
        """The config as plain data under its current names (what a run folder's
        ``config.yaml`` holds); a field that joined after the current digest version is left
        out while unset, as in the canonical form."""
        return canonical_form(self, DIGEST_VERSION, old_names=False)

    def canonical_form(self, version: int = DIGEST_VERSION) -> dict[str, Any]:
        """What the digest of ``version`` hashes (`canonical_form`)."""
        return canonical_form(self, version)

    def digest(self, version: int = DIGEST_VERSION) -> str:
        """sha256 of the canonical form (canonical JSON), recorded in run folders and exported
        models as ``config_sha256``."""
        return canonical_digest(self.canonical_form(version))


# ------------------------------------------------------------------------------ parsing
def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _convert(value: Any, tp: Any, key: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        mapping_error = None
        for option in typing.get_args(tp):
            try:
                return _convert(value, option, key)
            except ConfigError as err:
                if isinstance(value, dict) and dataclasses.is_dataclass(option):
                    mapping_error = err  # a mapping meant this option: say what is wrong in it
                elif not str(err).startswith(f"{key}: expected"):
                    mapping_error = mapping_error or err  # right kind, bad value (NaN)
        if mapping_error is not None:
            raise mapping_error
        raise ConfigError(f"{key}: expected {_type_name(tp)}, got {value!r}")
    if tp is type(None):
        if value is None:
            return None
        raise ConfigError(f"{key}: expected null, got {value!r}")
    if origin is Literal:
        if value in typing.get_args(tp):
            return value
        choices = ", ".join(repr(c) for c in typing.get_args(tp))
        raise ConfigError(f"{key}: expected one of {choices}, got {value!r}")
    if origin is list:
        (item,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise ConfigError(f"{key}: expected a list, got {value!r}")
        return [_convert(v, item, f"{key}[{i}]") for i, v in enumerate(value)]
    if dataclasses.is_dataclass(tp):
        return _build(tp, value, key)
    if tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp is float:
        number = None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value) if abs(value) < 1e308 else math.inf
        elif isinstance(value, str) and _FLOAT_TEXT.fullmatch(value.strip()):
            number = float(value)  # YAML 1.1 reads `1e-5` (no dot) as a string
        if number is not None:
            if not math.isfinite(number):  # NaN passes every `<` check: refuse it here
                raise ConfigError(f"{key}: must be a finite number, got {value!r}")
            return number
    elif tp is str:
        if isinstance(value, str):
            return value
    else:  # pragma: no cover - a field type this parser does not know
        raise TypeError(f"{key}: unsupported field type {tp!r}")
    raise ConfigError(f"{key}: expected {_type_name(tp)}, got {value!r}")


_MISSING_HINTS = {
    (Schedule, "steps"): " (the schedule's length in env-steps, e.g. 40000000, or "
    "'total_timesteps' to stretch it over train.total_timesteps)",
}


def _renamed_keys(cls: type, data: dict[str, Any], prefix: str) -> dict[str, Any]:
    """``data`` with the older keys of ``cls`` (`RENAMED`) under their current names:
    ``reward_only: true`` is ``teacher: none``; ``reward_only: false`` said nothing."""
    for old, r in RENAMED.get(cls.__name__, {}).items():
        if old not in data:
            continue
        where = f"{prefix}.{old}" if prefix else old
        data = dict(data)
        value = data.pop(old)
        if r.values is None:
            new = [value]
        else:
            new = [n for o, n in r.values if type(o) is type(value) and o == value]
        if not new:
            choices = ", ".join(json.dumps(o) for o, _ in r.values)
            raise ConfigError(f"{where}: must be one of {choices} {r.hint}, got {value!r}")
        if new[0] is None and r.values is not None:
            continue  # the old key's "unset": nothing to carry over
        if r.new in data:
            raise ConfigError(f"{where}: an older name of `{r.new}` {r.hint}; give one of the two")
        data[r.new] = new[0]
    return data


def _build(cls: type, data: Any, prefix: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"{prefix or 'config'}: expected a mapping, got {data!r}")
    data = _renamed_keys(cls, data, prefix)
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    for key in data:
        if key not in names:
            where = f"{prefix}.{key}" if prefix else str(key)
            raise ConfigError(f"{where}: unknown key (known: {', '.join(sorted(names))})")
    kwargs = {}
    for f in dataclasses.fields(cls):
        key = f"{prefix}.{f.name}" if prefix else f.name
        if f.name in data:
            kwargs[f.name] = _convert(data[f.name], hints[f.name], key)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            hint = _MISSING_HINTS.get((cls, f.name), "")
            raise ConfigError(f"{key}: missing required key{hint}")
    return cls(**kwargs)


def _positive(key: str, value: float, allow_zero: bool = False) -> None:
    if value < 0 or (value == 0 and not allow_zero):
        raise ConfigError(f"{key}: must be {'>= 0' if allow_zero else '> 0'}, got {value}")


MAX_SEED = 2**32 - 1  # numpy's legacy seeding and SB3's set_random_seed take 32 bits
MAX_NAME_LENGTH = 100


def check_run_name(name: str, key: str = "name") -> str:
    """``name`` if it is a plain folder name: 1-100 characters, no path separator, NUL or
    other control character, not starting with a dot or space."""
    bad = [c for c in name if c in "/\\" or ord(c) < 32 or ord(c) == 127]
    if not name or bad or name.startswith((".", " ")) or name.endswith(" "):
        raise ConfigError(
            f"{key}: must be a plain folder name (no '/', '\\', control characters or leading "
            f"dot), got {name[: MAX_NAME_LENGTH + 20]!r}"
        )
    if len(name) > MAX_NAME_LENGTH:
        raise ConfigError(f"{key}: at most {MAX_NAME_LENGTH} characters, got {len(name)}")
    return name


def validate(cfg: RunConfig) -> RunConfig:
    """Check values that the types alone do not rule out."""
    check_run_name(cfg.name)
    if cfg.env.id not in ENV_IDS:
        raise ConfigError(
            f"env.id: one of {', '.join(map(repr, ENV_IDS))} can be trained, got {cfg.env.id!r}"
        )
    if cfg.env.rules not in PRESETS:
        raise ConfigError(
            f"env.rules: unknown preset {cfg.env.rules!r} (known: {', '.join(PRESETS)})"
        )
    _positive("env.num_envs", cfg.env.num_envs)
    _positive("env.reward_scale", cfg.env.reward_scale)
    from yahtzee_env.game.observation import INPUT_SIZES

    if cfg.env.observation_version not in INPUT_SIZES:
        raise ConfigError(
            f"env.observation_version: must be one of {sorted(INPUT_SIZES)}, "
            f"got {cfg.env.observation_version}"
        )
    _positive("env.shaping_weight", cfg.env.shaping_weight, allow_zero=True)
    if cfg.teacher is not None and cfg.warm_start.teacher != cfg.teacher:
        raise ConfigError(
            f"warm_start.teacher: the config's teacher is {cfg.teacher!r}, got "
            f"{cfg.warm_start.teacher!r}"
        )
    for i, width in enumerate(cfg.policy.net_arch):
        _positive(f"policy.net_arch[{i}]", width)
    for i, width in enumerate(cfg.policy.vf_arch or []):
        _positive(f"policy.vf_arch[{i}]", width)
    p = cfg.ppo
    for name in ("n_steps", "batch_size", "n_epochs"):
        _positive(f"ppo.{name}", getattr(p, name))
    rollout = p.n_steps * cfg.env.num_envs
    if rollout % p.batch_size:
        raise ConfigError(
            f"ppo.batch_size: n_steps * env.num_envs = {p.n_steps} * {cfg.env.num_envs} = "
            f"{rollout} is not divisible by batch_size {p.batch_size}"
        )
    if not 0 < p.gamma <= 1:
        raise ConfigError(f"ppo.gamma: must be in (0, 1], got {p.gamma}")
    if not 0 <= p.gae_lambda <= 1:
        raise ConfigError(f"ppo.gae_lambda: must be in [0, 1], got {p.gae_lambda}")
    for name in SCHEDULED:
        value = getattr(p, name)
        if not isinstance(value, Schedule):
            _positive(f"ppo.{name}", value, allow_zero=name == "ent_coef")
            continue
        _positive(f"ppo.{name}.start", value.start, allow_zero=True)
        _positive(f"ppo.{name}.end", value.end, allow_zero=True)
        if value.steps != FOLLOW_TOTAL:
            _positive(f"ppo.{name}.steps", value.steps)
    _positive("ppo.vf_coef", p.vf_coef, allow_zero=True)
    _positive("ppo.anchor_kl", p.anchor_kl, allow_zero=True)
    if p.anchor_kl > 0 and cfg.policy.init is None:
        raise ConfigError("ppo.anchor_kl: needs policy.init (the network the policy is held near)")
    if not 0 <= p.anchor_release <= 12:
        raise ConfigError(f"ppo.anchor_release: must be 0-12 turns, got {p.anchor_release}")
    if p.anchor_release and p.anchor_kl <= 0:
        raise ConfigError("ppo.anchor_release: lets go of an anchor; set ppo.anchor_kl above 0")
    _positive("ppo.max_grad_norm", p.max_grad_norm)
    for name in ("clip_range_vf", "target_kl"):  # None switches them off; 0 or less is nonsense
        if getattr(p, name) is not None:
            _positive(f"ppo.{name}", getattr(p, name))
    w = cfg.warm_start
    if w.teacher != "none":
        for name in ("games", "epochs", "batch_size", "learning_rate", "temperature"):
            _positive(f"warm_start.{name}", getattr(w, name))
    if not 0 <= w.explore < 1:
        raise ConfigError(f"warm_start.explore: must be in [0, 1), got {w.explore}")
    t = cfg.train
    _positive("train.total_timesteps", t.total_timesteps, allow_zero=True)
    for name in ("seed", "eval_seed"):
        value = getattr(t, name)
        if not 0 <= value <= MAX_SEED:
            raise ConfigError(f"train.{name}: must be in 0..2**32-1, got {value}")
    _positive("train.eval_interval", t.eval_interval, allow_zero=True)
    _positive("train.eval_games", t.eval_games)
    _positive("train.checkpoint_interval", t.checkpoint_interval)
    _positive("train.keep_checkpoints", t.keep_checkpoints)
    _positive("train.torch_threads", t.torch_threads)
    _validate_table(cfg)
    if cfg.policy.init is not None:
        _validate_init(cfg)
    if cfg.train.engine == "jax":
        _validate_jax(cfg)
    return cfg


def _validate_jax(cfg: RunConfig) -> None:
    """What the JAX engine does not train (`yahtzee_agents.jax.ppo`), refused by its key."""
    unsupported = {
        "env.id": (cfg.env.id, "Yahtzee-v0", "solitaire only"),
        "teacher": (cfg.teacher in (None, "none"), True, "no teacher"),
        "warm_start.teacher": (cfg.warm_start.teacher, "none", "no warm start"),
        "policy.init": (cfg.policy.init, None, "starts from random weights"),
        "ppo.clip_range": (isinstance(cfg.ppo.clip_range, Schedule), False, "a constant"),
        "ppo.ent_coef": (isinstance(cfg.ppo.ent_coef, Schedule), False, "a constant"),
        "ppo.clip_range_vf": (cfg.ppo.clip_range_vf, None, "not clipped"),
        "ppo.normalize_advantage": (cfg.ppo.normalize_advantage, True, "always normalised"),
        "ppo.target_kl": (cfg.ppo.target_kl, None, "no early stop"),
        "ppo.anchor_kl": (cfg.ppo.anchor_kl, 0.0, "no anchor"),
    }
    for key, (value, wanted, what) in unsupported.items():
        if value != wanted:
            raise ConfigError(f"{key}: train.engine jax trains PPO from scratch ({what})")


def _validate_table(cfg: RunConfig) -> None:
    """``YahtzeeVs-v0`` and its ``versus`` section go together, with input version 3."""
    from yahtzee_env.game.observation import TABLE_INPUT_VERSION

    table = cfg.env.id == "YahtzeeVs-v0"
    if cfg.env.observation_version == TABLE_INPUT_VERSION and not table:
        raise ConfigError(
            f"env.observation_version: {TABLE_INPUT_VERSION} reads a 2-seat table; it needs "
            "env.id: YahtzeeVs-v0"
        )
    if not table:
        if cfg.versus is not None:
            raise ConfigError("versus: a section for env.id YahtzeeVs-v0 only")
        if cfg.warm_start.teacher == "duelist":
            raise ConfigError(
                "warm_start.teacher: the duelist teaches at a 2-seat table (env.id YahtzeeVs-v0)"
            )
        return
    if cfg.versus is None:
        raise ConfigError("versus: missing (env.id YahtzeeVs-v0 needs its opponents)")
    if cfg.env.observation_version != TABLE_INPUT_VERSION:
        raise ConfigError(
            f"env.observation_version: YahtzeeVs-v0 trains on the table (version "
            f"{TABLE_INPUT_VERSION}), got {cfg.env.observation_version}"
        )
    if not cfg.env.canonical_holds:
        raise ConfigError("env.canonical_holds: YahtzeeVs-v0 trains with canonical holds")
    if cfg.env.shaping != "none":
        raise ConfigError(
            f"env.shaping: YahtzeeVs-v0 learns from the result alone, got {cfg.env.shaping!r}"
        )
    if cfg.warm_start.teacher not in ("none", "duelist"):
        raise ConfigError(
            f"warm_start.teacher: at a 2-seat table the teacher is the duelist (or none), got "
            f"{cfg.warm_start.teacher!r}"
        )
    v = cfg.versus
    if not v.opponents:
        raise ConfigError("versus.opponents: at least one opponent")
    names = [o.name for o in v.opponents]
    for i, o in enumerate(v.opponents):
        if not o.name or names.index(o.name) != i:
            raise ConfigError(f"versus.opponents[{i}].name: empty or repeated: {o.name!r}")
        _positive(f"versus.opponents[{i}].weight", o.weight, allow_zero=True)
    if sum(o.weight for o in v.opponents) <= 0:
        raise ConfigError("versus.opponents: the weights sum to 0")
    _positive("versus.snapshot_interval", v.snapshot_interval)
    _positive("versus.pool_size", v.pool_size)
    _positive("versus.value_warmup", v.value_warmup, allow_zero=True)
    if v.eval_opponent == "self" or not v.eval_opponent:
        raise ConfigError(f"versus.eval_opponent: a fixed policy, got {v.eval_opponent!r}")


def _validate_init(cfg: RunConfig) -> None:
    """``policy.init`` names a model whose network fits this one (read from its manifest)."""
    from yahtzee_env.game.observation import INPUT_SIZES
    from yahtzee_env.policies.models import LEVELS, LEVELS_DIR, ModelFormatError, read_manifest

    init = cfg.policy.init
    path = LEVELS_DIR / f"{init}.json" if init in LEVELS else Path(init)
    try:
        manifest = read_manifest(path)
    except ModelFormatError as err:
        raise ConfigError(f"policy.init: {err}") from None
    if manifest.kind != "mlp":
        raise ConfigError(f"policy.init: {init!r} is a {manifest.kind} model, not a policy MLP")
    if list(manifest.hidden) != list(cfg.policy.net_arch):
        raise ConfigError(
            f"policy.init: {init!r} has hidden layers {list(manifest.hidden)}, "
            f"policy.net_arch is {cfg.policy.net_arch}"
        )
    if manifest.activation != cfg.policy.activation:
        raise ConfigError(
            f"policy.init: {init!r} uses {manifest.activation}, policy.activation is "
            f"{cfg.policy.activation}"
        )
    if manifest.rules != cfg.env.rules:
        raise ConfigError(
            f"policy.init: {init!r} was trained for rules {manifest.rules!r}, env.rules is "
            f"{cfg.env.rules!r}"
        )
    if manifest.canonical_holds != cfg.env.canonical_holds:
        raise ConfigError("policy.init: its holds (canonical or all) differ from env's")
    theirs, mine = manifest.input_version, cfg.env.observation_version
    if INPUT_SIZES[theirs] > INPUT_SIZES[mine] or theirs > mine:
        raise ConfigError(
            f"policy.init: {init!r} reads input version {theirs}; it can start a network of "
            f"that version or a later one that extends it, not version {mine}"
        )


def config_from_dict(data: Any) -> RunConfig:
    return validate(_build(RunConfig, data, ""))


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``section.key=value`` overrides (value parsed as YAML) to a raw config dict."""
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE, e.g. ppo.learning_rate=1e-4")
        dotted, raw = item.split("=", 1)
        *path, last = dotted.strip().split(".")
        node = data
        for part in path:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {dotted}: {part!r} is not a section")
        node[last] = yaml.safe_load(raw)
    return data


def load_config(path: str | Path, overrides: list[str] | None = None) -> RunConfig:
    """Read, override and validate a YAML run config."""
    return config_from_dict(apply_overrides(read_yaml_mapping(path), overrides or []))


MAX_CONFIG_BYTES = 1 << 20


def read_yaml_mapping(path: str | Path) -> dict[str, Any]:
    """The top-level mapping of a YAML file; `ConfigError` naming the file if it cannot be
    read, is larger than 1 MiB, not UTF-8, not YAML or not a mapping."""
    from yahtzee_env.fileio import read_regular_file

    path = Path(path)
    try:
        text = read_regular_file(path, MAX_CONFIG_BYTES).decode("utf-8")
        data = yaml.safe_load(text)
    except OSError as err:
        raise ConfigError(f"cannot read config {path}: {err.strerror or err}") from err
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from err
    except (yaml.YAMLError, RecursionError) as err:
        problem = getattr(err, "problem", None) or "nested too deeply"
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise ConfigError(f"{path}: not valid YAML: {problem}{where}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return data
