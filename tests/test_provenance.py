"""Proofs survive change (issue 59): every shipped level's ``config_sha256`` is reproduced from a
committed config, every run record's digest verifies, and the canonical form that digests hash
keeps them as the config dataclasses grow (a field added at its default, a key renamed through
`RENAMED`) while a value that differs still changes them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from yahtzee_agents import config as config_module
from yahtzee_agents.config import (
    DIGEST_VERSION,
    OMITTED_AT,
    RunConfig,
    canonical_digest,
    canonical_form,
    config_from_dict,
    digest_version_of,
    load_config,
    read_yaml_mapping,
)
from yahtzee_env.policies.models import LEVELS, LEVELS_DIR

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"  # the data shelf (data/README.md; experiments/shelf.py)
HARD_RUN = "data/ppo_long/ppo-long-lam09-s0/config.yaml"

LEVEL_CONFIGS = {
    # level: (the committed config that made it, the digest version its manifest recorded)
    "easy": ("data/levels/ladder-s0/config.yaml", 1),
    "medium": ("data/levels/ladder-s0/config.yaml", 1),
    "hard": (HARD_RUN, 1),
    "duelist": (HARD_RUN, 1),  # hard's network: the manifest states hard's config
    "expert": ("data/levels/expert/config.yaml", 0),
    "master": ("data/model_based/value-s0.json", None),  # the model-based agent's config
    "winner": ("data/win/winner/run-expert-init/config.yaml", 2),  # its table network's run
}
"""Every shipped level's config. No level is excepted: a level whose config could not be
recovered would be named here with the reason, and its manifest and card would say so."""


def _level_config(level: str):
    path, _ = LEVEL_CONFIGS[level]
    if path.endswith(".json"):
        from yahtzee_agents.model_based import ModelBasedConfig

        return ModelBasedConfig(**json.loads((ROOT / path).read_text())["config"])
    return load_config(ROOT / path)


def _manifest_digest(level: str) -> str:
    return json.loads((LEVELS_DIR / f"{level}.json").read_text())["config_sha256"]


def test_every_shipped_level_is_named_with_its_config() -> None:
    assert sorted(LEVEL_CONFIGS) == sorted(LEVELS)


@pytest.mark.parametrize("level", sorted(LEVEL_CONFIGS))
def test_a_shipped_levels_digest_is_reproduced_by_its_committed_config(level) -> None:
    cfg = _level_config(level)
    _, version = LEVEL_CONFIGS[level]
    recorded = _manifest_digest(level)
    if version is None:
        assert cfg.digest() == recorded
    else:
        assert cfg.digest(version) == recorded
        assert digest_version_of(cfg, recorded) == version


def _run_records() -> list[Path]:
    found = [*DATA.rglob("meta.json"), *(ROOT / "checkpoints").glob("*/meta.json")]
    return sorted(p for p in found if (p.parent / "config.yaml").exists())


def test_every_recorded_run_digest_verifies() -> None:
    """A run folder's ``meta.json`` digest is reproduced by its ``config.yaml`` in some digest
    version (in the one it names, when it names one)."""
    records = _run_records()
    assert len(records) >= 28
    bad = []
    for meta_file in records:
        meta = json.loads(meta_file.read_text())
        version = digest_version_of(
            load_config(meta_file.parent / "config.yaml"), meta["config_sha256"]
        )
        if version is None or version != meta.get("config_digest_version", version):
            bad.append(f"{meta_file.relative_to(ROOT)}: {version}")
    assert not bad, "\n".join(bad)


def _committed_configs() -> list[RunConfig]:
    paths = {ROOT / path for path, version in LEVEL_CONFIGS.values() if version is not None}
    paths |= {ROOT / "configs" / name for name in ("ppo.yaml", "win.yaml", "expert.yaml")}
    return [load_config(p) for p in sorted(paths)]


def _digests(obj) -> list[str]:
    return [canonical_digest(canonical_form(obj, v)) for v in range(DIGEST_VERSION + 1)]


def _with_new_field(obj, section: str | None, default):
    """``obj`` with a field ``new_knob`` added at ``default`` to the dataclass of ``section``
    (None: the top level), as a later change of the code would add it."""
    target = obj if section is None else getattr(obj, section)
    cls = type(target)
    spec = [(f.name, f.type, f) for f in dataclasses.fields(cls)]
    grown = dataclasses.make_dataclass(
        cls.__name__, [*spec, ("new_knob", type(default), dataclasses.field(default=default))]
    )
    copy = grown(**{f.name: getattr(target, f.name) for f in dataclasses.fields(cls)})
    if section is None:
        return copy
    return dataclasses.replace(obj, **{section: copy})


@pytest.mark.parametrize("section", [None, "env", "ppo", "train"])
def test_a_field_added_at_its_default_changes_no_digest(section) -> None:
    for cfg in _committed_configs():
        before = _digests(cfg)
        assert _digests(_with_new_field(cfg, section, 0.5)) == before, cfg.name
        changed = _with_new_field(cfg, section, 0.5)
        (changed if section is None else getattr(changed, section)).new_knob = 0.7
        assert canonical_digest(canonical_form(changed)) != before[-1], cfg.name


def test_the_model_based_config_keeps_its_digest_when_a_field_is_added() -> None:
    cfg = _level_config("master")
    assert canonical_digest(canonical_form(_with_new_field(cfg, None, 3))) == cfg.digest()


def test_a_renamed_key_read_through_its_alias_gives_the_same_digest(monkeypatch) -> None:
    data = read_yaml_mapping(ROOT / HARD_RUN)
    assert data.pop("reward_only") is True  # the run wrote the older key
    now = config_from_dict({**data, "teacher": "none"})
    then = config_from_dict({**data, "reward_only": True})
    assert now == then and _digests(now) == _digests(then)
    assert now.digest(1) == _manifest_digest("hard")
    # A plain rename (same values): the old key reads as the new one, every digest unchanged.
    monkeypatch.setitem(
        config_module.RENAMED,
        "TrainConfig",
        {"games_per_evaluation": config_module.Renamed("eval_games", None, since=0)},
    )
    train = dict(data["train"])
    train["games_per_evaluation"] = train.pop("eval_games")
    old = {**data, "teacher": "none", "train": train}
    assert _digests(config_from_dict(old)) == _digests(then)


def test_a_field_off_its_default_changes_the_digest() -> None:
    cfg = load_config(ROOT / HARD_RUN)
    for section, name, value in (
        ("ppo", "anchor_kl", 0.1),  # joined after every version: left out only at 0
        ("ppo", "anchor_release", 2),
        ("env", "shaping_weight", 0.5),  # written since version 1
        ("train", "eval_games", 100),  # written by every version
    ):
        changed = dataclasses.replace(
            cfg, **{section: dataclasses.replace(getattr(cfg, section), **{name: value})}
        )
        for version in range(DIGEST_VERSION + 1):
            assert changed.digest(version) != cfg.digest(version), (name, version)


def test_a_field_no_version_writes_has_its_omitted_value_pinned() -> None:
    """A field that the current version leaves out at some value must name that value in
    `OMITTED_AT` (the behaviour before the field existed), so that a later change of its default
    cannot change what an omitted field meant. Today's defaults are those values."""
    from yahtzee_agents.model_based import ModelBasedConfig

    classes = [
        RunConfig,
        config_module.EnvConfig,
        config_module.PolicyConfig,
        config_module.PPOConfig,
        config_module.Schedule,
        config_module.WarmStartConfig,
        config_module.TrainConfig,
        config_module.VersusConfig,
        config_module.OpponentWeight,
        ModelBasedConfig,
    ]
    unpinned = []
    for cls in classes:
        written = config_module._written(cls.__name__, DIGEST_VERSION)
        for f in dataclasses.fields(cls):
            key = f"{cls.__name__}.{f.name}"
            if f.name not in written:
                if key not in OMITTED_AT:
                    unpinned.append(key)
                elif f.default is not dataclasses.MISSING:
                    assert f.default == OMITTED_AT[key], key
    assert not unpinned, unpinned
    assert set(OMITTED_AT) <= {
        f"{c.__name__}.{f.name}" for c in classes for f in dataclasses.fields(c)
    }


def test_the_recipes_in_configs_do_not_say_a_level() -> None:
    """``level:`` is said by the run config that made a level (above), not by a recipe."""
    saying = [
        p.name
        for p in (ROOT / "configs").glob("*.yaml")
        if "level" in yaml.safe_load(p.read_text())
    ]
    assert not saying, saying


def test_a_run_record_keeps_its_version_when_exported(tmp_path) -> None:
    """`run_digest` gives a run's recorded digest and its version (what an export records)."""
    from yahtzee_agents.run.folder import run_digest

    run = ROOT / HARD_RUN
    cfg = load_config(run)
    assert run_digest(run.parent, cfg) == (_manifest_digest("hard"), 1)
    (tmp_path / "meta.json").write_text(json.dumps({"config_sha256": "0" * 64}))
    assert run_digest(tmp_path, cfg) == (cfg.digest(), DIGEST_VERSION)
