"""What an agent knew: the five facts every leaderboard row, benchmark row and level manifest
states, so that a reader can tell which rows are comparable (issue 29; Open RL Benchmark and
rliable ask the same of a results table).

    from yahtzee_env.policies.knowledge import knowledge_of, track

    knew = knowledge_of(policy)        # {"observation": ..., "reward": ..., ...}
    track(knew)                        # 'model-free with aids (features, shaping, canonical holds)'

Each fact is a value from a small vocabulary (`VOCABULARY`), optionally followed by a detail in
brackets: ``"shaped (potential-based upper-bonus shaping)"``. The five facts:

* ``observation``: what the agent's network or rules read: the env's ``raw 72 floats``, the
  ``raw state`` (the scorecard and dice in another encoding, nothing derived), or the floats
  ``with hand-made features`` added;
* ``reward``: what it learned from: the ``game score only``, the ``game result only`` (won,
  drawn or lost at a table), a ``shaped`` reward (say which), or ``none`` (hand-made or
  solved: nothing learned from a reward);
* ``actions``: ``all 32 holds`` or only the ``canonical holds`` (one hold per kept multiset);
* ``model``: access to the game's dynamics: ``none`` or the ``exact rules model`` (say how it
  is used: expectimax, value iteration, a one-step look-up);
* ``teacher``: ``none``, the ``solver`` (distillation) or the ``heuristic`` (imitation).

A row that cannot say writes ``not stated``. The ``track`` of a row is derived from the five:
an agent is ``reward-only`` only if it read the raw observation, learned from the game score
alone over all 32 holds, with no model and no teacher.

Two details the teacher fact carries, because they are what an agent was given beyond its
reward without being taught: a **prior** (its network started from another's weights, maybe
held near them by a KL penalty: `knowledge_of_training`'s ``init``; the track names it) and a
**checkpoint chosen by the solver** (`chosen_by_solver`: of the checkpoints a run kept, the
one graded is the one with the lower regret on its evaluation games, which the solver grades).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

FIELDS = ("observation", "reward", "actions", "model", "teacher")
NOT_STATED = "not stated"
VOCABULARY: dict[str, tuple[str, ...]] = {
    "observation": ("raw 72 floats", "raw state", "with hand-made features", NOT_STATED),
    "reward": ("game score only", "game result only", "shaped", "none", NOT_STATED),
    "actions": ("all 32 holds", "canonical holds", NOT_STATED),
    "model": ("none", "exact rules model", NOT_STATED),
    "teacher": ("none", "solver", "heuristic", NOT_STATED),
}
MAX_DETAIL = 160  # characters of a fact's bracketed detail

UNKNOWN: dict[str, str] = dict.fromkeys(FIELDS, NOT_STATED)
"""What a row says about an agent it knows nothing of (a function, an object)."""


class KnowledgeError(ValueError):
    """A ``knew`` object that is not five facts from the vocabulary."""


def head(value: str) -> str:
    """A fact without its bracketed detail: ``"shaped (upper bonus)"`` -> ``"shaped"``."""
    return value.split(" (", 1)[0]


def check_knowledge(knew: Any, where: str = "knew") -> dict[str, str]:
    """``knew`` as a plain dict of the five facts, or `KnowledgeError` naming the field
    (``knew.reward: 'shapped' is not one of ...``)."""
    if not isinstance(knew, Mapping):
        raise KnowledgeError(f"{where}: must be an object with {', '.join(FIELDS)}")
    missing = [f for f in FIELDS if f not in knew]
    if missing:
        raise KnowledgeError(f"{where}.{missing[0]}: missing (a row states {', '.join(FIELDS)})")
    extra = sorted(set(knew) - set(FIELDS))
    if extra:
        raise KnowledgeError(f"{where}.{str(extra[0])[:40]}: unknown field")
    out = {}
    for field in FIELDS:
        value = knew[field]
        if not isinstance(value, str):
            raise KnowledgeError(f"{where}.{field}: must be a string, got {type(value).__name__}")
        allowed = VOCABULARY[field]
        detail = value[len(head(value)) :]
        if head(value) not in allowed or (detail and not _is_detail(detail)):
            raise KnowledgeError(
                f"{where}.{field}: {value[:60]!r} is not one of {', '.join(map(repr, allowed))} "
                "(optionally followed by a detail in brackets)"
            )
        out[field] = value
    return out


def _is_detail(text: str) -> bool:
    return text.startswith(" (") and text.endswith(")") and len(text) <= MAX_DETAIL + 3


def knowledge(**facts: str) -> dict[str, str]:
    """The five facts, checked; any not given is ``not stated``."""
    return check_knowledge({**UNKNOWN, **facts})


def knowledge_of_training(
    *,
    observation_version: int,
    shaping: str = "none",
    canonical_holds: bool,
    teacher: str = "none",
    ppo_steps: int = 1,
    init: str | None = None,
    anchor_kl: float = 0.0,
    anchor_release: int = 0,
) -> dict[str, str]:
    """The facts of a network trained by this project's recipe (a run config's
    ``env.observation_version``, ``env.shaping``, ``env.canonical_holds``,
    ``warm_start.teacher``, ``policy.init``, ``ppo.anchor_kl`` and ``ppo.anchor_release``;
    ``ppo_steps`` 0 for a
    distilled policy shipped before PPO). Input version 3 is a 2-seat table's learner: the
    result is its reward."""
    from yahtzee_env.game.observation import INPUT_SIZES, OBS_SIZE, STRATEGY_SIZE, TABLE_SIZE

    table = observation_version == 3
    if observation_version == 1:
        observation = "raw 72 floats"
    elif table:
        observation = (
            f"with hand-made features ({STRATEGY_SIZE} rules-only strategy features, and the "
            f"table: both totals and the other card, {TABLE_SIZE} floats; input version 3: "
            f"{INPUT_SIZES[observation_version]} floats)"
        )
    else:
        extra = INPUT_SIZES[observation_version] - OBS_SIZE
        observation = (
            f"with hand-made features ({extra} rules-only strategy features, input version "
            f"{observation_version}: {INPUT_SIZES[observation_version]} floats)"
        )
    if teacher != "none" and ppo_steps == 0:
        reward = "none (imitation only: the shipped weights are from before any PPO update)"
    elif table:
        reward = "game result only (+1 won, 0 drawn, -1 lost, at the end of a 2-seat game)"
    elif shaping == "upper-bonus":
        reward = "shaped (potential-based upper-bonus shaping)"
    elif shaping == "none":
        reward = "game score only"
    else:
        reward = f"shaped ({shaping})"
    teachers = {
        "none": "none",
        "optimal": "solver (distillation of the exact solver's action values)",
        "heuristic": "heuristic (imitation of the built-in heuristic)",
        "duelist": (
            "solver (distilled from the duelist: the solver's moves and its exact win search "
            "over the last turns)"
        ),
    }
    taught = teachers[teacher]
    if init is not None and teacher != "none":
        taught = f"{taught[:-1]}; its policy network started from {init}'s weights)"
    if init is not None and teacher == "none":
        taught = f"none (its policy network started from {init}'s weights)"
        if anchor_kl > 0:
            where = f", except in its last {anchor_release} turns" if anchor_release else ""
            taught = (
                f"none (its policy network started from {init}'s weights; a KL penalty to "
                f"them in its loss, coefficient {anchor_kl:g}{where})"
            )
    return knowledge(
        observation=observation,
        reward=reward,
        actions="canonical holds" if canonical_holds else "all 32 holds",
        model="none",
        teacher=taught,
    )


CHOSEN_BY_SOLVER = "checkpoint chosen by solver-graded evaluation: the lower regret of the two kept"
"""The teacher's detail of a run whose graded checkpoint the solver's grading picked."""
_PRIOR = re.compile(r"started from (?P<init>[^;)]+?)'s weights(?P<anchor>; a KL penalty to them)?")


def chosen_by_solver(knew: Mapping[str, str]) -> dict[str, str]:
    """``knew`` with `CHOSEN_BY_SOLVER` added to its teacher's detail (once): the run's
    checkpoint was picked by the solver's grading of its evaluation games, not by the agent."""
    teacher = knew["teacher"]
    if CHOSEN_BY_SOLVER in teacher:
        return check_knowledge(knew)
    detail = teacher[len(head(teacher)) :]
    teacher = (
        f"{head(teacher)} ({detail[2:-1]}; {CHOSEN_BY_SOLVER})"
        if detail
        else f"{teacher} ({CHOSEN_BY_SOLVER})"
    )
    return check_knowledge({**knew, "teacher": teacher})


def prior_of(knew: Mapping[str, str]) -> str | None:
    """What a network started from, as its track names it (``"hard's weights, KL-anchored"``),
    from the teacher's detail that `knowledge_of_training` writes; None without a prior."""
    found = _PRIOR.search(knew["teacher"])
    if found is None:
        return None
    return f"{found['init']}'s weights" + (", KL-anchored" if found["anchor"] else "")


def knowledge_of_turn_values() -> dict[str, str]:
    """The facts of the model-based baseline (`yahtzee_agents.model_based`, the level master):
    turn values learned from its own games' scores, each turn played by expectimax."""
    return knowledge(
        observation="raw state (its value network reads the turn-start scorecard: 80 floats)",
        reward="game score only",
        actions="canonical holds (expectimax over the 462 keeps)",
        model="exact rules model (expectimax through each turn)",
        teacher="none",
    )


def knowledge_of_manifest(manifest: Any) -> dict[str, str]:
    """A level's facts: its manifest's ``knew``, else what its other fields say (observation
    version, holds, teacher, method); the reward of an older manifest is ``not stated``."""
    raw = getattr(manifest, "raw", {}) or {}
    if "knew" in raw:
        return check_knowledge(raw["knew"], f"{manifest.path.name}: knew")
    teacher = raw.get("teacher")
    facts = {
        "actions": "canonical holds" if manifest.canonical_holds else "all 32 holds",
        "teacher": {None: "none", "optimal": "solver", "heuristic": "heuristic"}.get(
            teacher, NOT_STATED
        ),
    }
    if manifest.method == "model-based":
        return knowledge_of_turn_values()
    else:
        facts.update(
            observation="raw 72 floats"
            if manifest.input_version == 1
            else "with hand-made features",
            model="none",
        )
    return knowledge(**facts)


def knowledge_of(policy: Any) -> dict[str, str]:
    """What ``policy`` knew: its manifest's (a level, a model file), else its own ``knew``
    (the built-in baselines, any agent that says), else ``not stated`` throughout."""
    for obj in (policy, getattr(policy, "policy", None)):  # a checked wrapper's inner policy
        if obj is None:
            continue
        manifest = getattr(obj, "manifest", None)  # a loaded model: its file says
        if manifest is not None:
            return knowledge_of_manifest(manifest)
        knew = getattr(obj, "knew", None)
        if knew is not None:
            return check_knowledge(knew, f"{getattr(obj, 'name', 'policy')}.knew")
    return dict(UNKNOWN)


def track(knew: Mapping[str, str]) -> str:
    """The row's track, derived from its five facts (never stated by hand): ``reward-only``
    only when nothing but the raw observation, the game score and all 32 holds was used; a
    network that started from another's weights names that prior among its aids."""
    h = {f: head(knew[f]) for f in FIELDS}
    if h["teacher"] == "solver":
        return "distilled (solver)"
    if h["teacher"] == "heuristic":
        return "imitation (heuristic)"
    if h["model"] == "exact rules model":
        if h["reward"] == "none":
            return "no learning (exact rules model)"
        return "model-based (exact rules model)"
    if h["reward"] == "none":
        return "no learning (hand-made)"
    if NOT_STATED in h.values():
        return "not stated"
    aids = []
    if h["observation"] == "with hand-made features":
        aids.append("features")
    if h["reward"] == "shaped":
        aids.append("shaping")
    if h["actions"] == "canonical holds":
        aids.append("canonical holds")
    prior = prior_of(knew)
    if prior is not None:
        aids.append(f"started from {prior}")
    if not aids:
        return "reward-only"
    return f"model-free with aids ({', '.join(aids)})"
