"""The one policy resolver: a policy from a name and the rules. The terminal, the web
tables, tournaments, `YahtzeeVs-v0` and evaluation all get their CPU players here.

    from yahtzee_env.policies.resolve import resolve_policy, policy_label

    hard = resolve_policy("hard", rules="upper-first")
    policy_label("hard", hard, "upper-first")  # 'hard (trained for official rules)'
"""

from __future__ import annotations

import functools
from typing import Any

from yahtzee_env.game.rules import RuleSet
from yahtzee_env.policies.baselines import POLICIES, RulesLike, SeedLike, make_policy


def resolve_policy(name: str, rules: RulesLike = None, seed: SeedLike = None):
    """The one policy resolver: a policy for ``name`` playing under ``rules``. The terminal,
    the web tables, tournaments, `YahtzeeVs-v0` and evaluation all get their policies here.

    ``name`` is a built-in (`POLICIES`), a shipped level, a model manifest path
    (``NAME.json``), an ONNX file (``*.onnx``, needs the export extra), or an SB3 checkpoint
    (``*.zip``) or run folder (needs the train extra; see `yahtzee_env.policies.sources`).

    The built-ins (``optimal``, ``heuristic``, ``greedy``, ``random``) are built for
    ``rules``. A trained model learned one preset; under other rules it is **allowed and
    labelled**, everywhere alike: the engine's mask keeps its moves legal, its
    ``trained_rules`` names the preset it learned, and `policy_label` reads
    ``"hard (trained for official rules)"``. A model that cannot be read raises
    `opponents.ModelFormatError`; an unknown name raises ValueError.
    """
    from yahtzee_env.policies.models import LEVELS, load_opponent
    from yahtzee_env.policies.sources import is_model_source, load_model_source

    if name in POLICIES:
        return make_policy(name, rules=rules, seed=seed)
    if name in LEVELS or name.endswith((".json", ".npz")):
        return load_opponent(name)
    if is_model_source(name):
        return load_model_source(name)
    raise ValueError(
        f"unknown policy {name!r}: use one of {', '.join([*POLICIES, *LEVELS])}, a model "
        "manifest (NAME.json), an ONNX file (NAME.onnx), or an SB3 model.zip or run folder"
    )


def trained_for_other_rules(policy: Any, rules: RulesLike) -> str | None:
    """The preset a trained ``policy`` learned when it is not ``rules``; None when the policy
    was built for ``rules`` (the built-ins) or learned them (or its rules are unknown). A
    level's `Manifest` answers as its policy does."""
    trained = getattr(policy, "trained_rules", None)
    if trained is None or RuleSet.from_spec(trained) == RuleSet.from_spec(rules):
        return None
    return RuleSet.from_spec(trained).name


def policy_label(name: str, policy: Any, rules: RulesLike) -> str:
    """``name``, with ``" (trained for official rules)"`` when ``policy`` plays rules it was
    not trained for (see `resolve_policy`)."""
    other = trained_for_other_rules(policy, rules)
    return name if other is None else f"{name} (trained for {other} rules)"


@functools.lru_cache(maxsize=64)
def _shared(name: str, rules: RuleSet | None):
    return resolve_policy(name, rules, seed=0)


def shared_policy(name: str, rules: RulesLike = None):
    """`resolve_policy(name, rules, seed=0)`, built once per (name, rules) and shared: for
    callers that seat the same CPU at many tables (the web server). Don't reseed it. A
    shipped level plays the same under any rules (it learned one preset), so it is built
    once for all of them (``master`` computes a ~6 MB table at load)."""
    from yahtzee_env.policies.models import LEVELS

    return _shared(name, None if name in LEVELS else RuleSet.from_spec(rules))


__all__ = ["policy_label", "resolve_policy", "shared_policy", "trained_for_other_rules"]
