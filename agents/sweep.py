"""Hyper-parameter sweeps on Ray Tune: Optuna search, ASHA early stopping, one normal
training run per trial.

    yahtzee sweep configs/sweeps/tiny.yaml [--address ADDR] [--resume]

A sweep file (typed and validated like a training config: `load_sweep`)::

    name: tiny-lr                  # the sweep folder is sweeps/<name> (or --out)
    base: ../tiny.yaml             # a training config; relative to this file
    set:                           # fixed changes to the base (dotted keys), optional
      train.total_timesteps: 2048
    space:                         # dotted config key -> distribution
      ppo.learning_rate: loguniform(1e-5, 1e-3)
      ppo.ent_coef: uniform(0.0, 0.02)
      policy.net_arch: choice([[32, 32], [64, 64]])
      train.seed: grid([0, 1])     # every suggestion is trained once per grid point
    metric: mean                   # the evaluation mean (maximised) or regret (minimised)
    trials: 4                      # trials in all (grid points included)
    seed: 0                        # the Optuna sampler's seed
    resources: {cpu: 1}            # per trial
    scheduler: {type: asha, grace_period: 1024, reduction_factor: 2}

Each trial is `yahtzee_agents.train.train` on the base config with the trial's values, in
``<sweep>/runs/<trial id>``; the periodic evaluations it already runs are reported to Tune
(``timesteps`` is ASHA's time axis), so ASHA stops the weak trials at its rungs. At the end
the sweep writes ``results.csv``/``results.json`` (one row per trial), ``results.png`` (the
metric against the most telling parameters) and ``best.yaml``, a ready-to-train config.

Faults: a trial whose worker dies is retried (``FailureConfig(max_failures=2)``) and continues
its run folder from the newest checkpoint; a killed sweep continues with ``--resume``
(`Tuner.restore`): finished trials are not run again (a trial whose run folder already has
its final evaluation only reports it).
"""

from __future__ import annotations

import contextlib
import copy
import csv
import dataclasses
import itertools
import json
import math
import os
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml

from yahtzee_env.fileio import atomic_write

from .config import (
    _FLOAT_TEXT,
    ConfigError,
    RunConfig,
    _build,
    apply_overrides,
    config_from_dict,
)

KINDS = ("loguniform", "uniform", "choice", "grid")
METRIC_MODES = {"mean": "max", "regret": "min"}
TUNE_DIR = "tune"  # Tune's experiment folder inside the sweep folder
TRIAL_INDEX = "__trial_index__"  # set by ray.tune.search.Repeater: the grid point


# ------------------------------------------------------------------------------ the file
@dataclass
class Resources:
    cpu: float = 1.0
    """CPUs per trial (give train.torch_threads more to use them)."""
    gpu: float = 0.0


@dataclass
class SchedulerConfig:
    type: Literal["asha", "none"] = "asha"
    grace_period: int = 0
    """Env steps a trial trains before ASHA may stop it (0: train.eval_interval)."""
    reduction_factor: float = 2.0
    """ASHA keeps the best 1/reduction_factor of the trials at each rung."""


@dataclass
class SweepFile:
    name: str
    base: str
    space: None | dict  # noqa: RUF036 (None first: the config parser tries it first)
    """Dotted config key -> distribution (checked by `load_sweep`)."""
    metric: Literal["mean", "regret"] = "mean"
    trials: int = 8
    seed: int = 0
    set: None | dict = None  # noqa: RUF036
    """Dotted config key -> fixed value, applied to the base."""
    resources: Resources = field(default_factory=Resources)
    scheduler: SchedulerConfig = field(default_factory=SchedulerConfig)
    max_concurrent: int = 0
    """Trials at once (0: as many as the cluster's resources allow)."""


@dataclass(frozen=True)
class Distribution:
    """One dimension of the search space, e.g. ``loguniform(1e-5, 1e-3)``."""

    kind: str
    args: tuple

    @property
    def values(self) -> list[Any]:
        """The candidate values of a ``choice`` or ``grid``."""
        return list(self.args[0])

    def __str__(self) -> str:
        inner = (
            json.dumps(self.values)
            if self.kind in ("choice", "grid")
            else (f"{self.args[0]:g}, {self.args[1]:g}")
        )
        return f"{self.kind}({inner})"


@dataclass
class Sweep:
    """A validated sweep: the file, the base config (with ``set`` applied) as a dict, and the
    space as `Distribution` objects."""

    file: SweepFile
    path: Path
    base: dict[str, Any]
    space: dict[str, Distribution]

    @property
    def mode(self) -> str:
        return METRIC_MODES[self.file.metric]

    @property
    def grid(self) -> list[dict[str, Any]]:
        """Every grid point, in order (``[{}]`` without grid dimensions)."""
        keys = [k for k, d in self.space.items() if d.kind == "grid"]
        values = [self.space[k].values for k in keys]
        return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*values)]

    @property
    def total_timesteps(self) -> int:
        return int(self.base["train"]["total_timesteps"])

    def trial_config(self, values: dict[str, Any], name: str) -> RunConfig:
        """The training config of one trial: the base with the dotted ``values`` set."""
        data = copy.deepcopy(self.base)
        data["name"] = name
        return config_from_dict(_set_dotted(data, values))


_CALL = re.compile(r"^\s*([a-z_]+)\s*\((.*)\)\s*$", re.DOTALL)


def parse_distribution(key: str, spec: Any) -> Distribution:
    """``"loguniform(1e-5, 1e-3)"`` -> `Distribution`; a clear `ConfigError` naming ``key``."""
    where = f"space.{key}"
    match = _CALL.match(spec) if isinstance(spec, str) else None
    if match is None:
        raise ConfigError(
            f"{where}: expected a distribution like loguniform(1e-5, 1e-3), uniform(0, 1), "
            f"choice([a, b]) or grid([a, b]), got {spec!r}"
        )
    kind, inner = match.groups()
    if kind not in KINDS:
        raise ConfigError(f"{where}: unknown distribution {kind!r} (known: {', '.join(KINDS)})")
    try:
        args = yaml.safe_load(f"[{inner}]")
    except yaml.YAMLError:
        raise ConfigError(f"{where}: cannot read the arguments of {spec!r}") from None
    if kind in ("loguniform", "uniform"):
        numbers = [_number(a) for a in args]
        if len(numbers) != 2 or None in numbers:
            raise ConfigError(f"{where}: {kind} takes two numbers (low, high), got {spec!r}")
        low, high = numbers
        if not low < high:
            raise ConfigError(f"{where}: {kind} needs low < high, got {spec!r}")
        if kind == "loguniform" and low <= 0:
            raise ConfigError(f"{where}: loguniform needs low > 0, got {spec!r}")
        return Distribution(kind, (low, high))
    if len(args) != 1 or not isinstance(args[0], list) or not args[0]:
        raise ConfigError(f"{where}: {kind} takes one non-empty list, e.g. {kind}([1, 2])")
    return Distribution(kind, (tuple(args[0]),))


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and _FLOAT_TEXT.fullmatch(value.strip()):
        return float(value)  # YAML 1.1 reads 1e-5 as a string
    return None


def _set_dotted(data: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    return apply_overrides(data, [f"{k}={json.dumps(v)}" for k, v in values.items()])


def _check_key(key: str, where: str) -> None:
    """``key`` must name a leaf of `RunConfig` (``ppo.learning_rate``), not a section."""
    cls: Any = RunConfig
    parts = key.split(".")
    for i, part in enumerate(parts):
        hints = typing.get_type_hints(cls)
        if part not in hints or (i == 0 and part == "name"):
            section = ".".join(parts[:i]) or "the config"
            known = ", ".join(sorted(h for h in hints if cls is not RunConfig or h != "name"))
            raise ConfigError(f"{where}.{key}: unknown config key ({section} has: {known})")
        last = i == len(parts) - 1
        if dataclasses.is_dataclass(hints[part]):
            if last:
                raise ConfigError(f"{where}.{key}: is a section; name one of its keys")
            cls = hints[part]
        elif not last:
            raise ConfigError(f"{where}.{key}: {'.'.join(parts[: i + 1])} is not a section")


def load_sweep(path: str | Path) -> Sweep:
    """Read and validate a sweep file: every key, distribution and candidate value is checked
    against the base config before anything starts (a `ConfigError` names the first problem)."""
    from .config import load_config

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as err:
        raise ConfigError(f"cannot read sweep {path}: {err.strerror}") from err
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from err
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    mappings = {k: data.get(k, {}) for k in ("space", "set")}  # dotted keys, checked below
    for key, value in mappings.items():
        if not isinstance(value, dict):
            raise ConfigError(f"{key}: expected a mapping of dotted config keys, got {value!r}")
    sweep = _build(SweepFile, {**data, "space": None, "set": None}, "")
    sweep.space, sweep.set = mappings["space"], mappings["set"]
    if not sweep.name or "/" in sweep.name or sweep.name.startswith("."):
        raise ConfigError(f"name: must be a plain folder name, got {sweep.name!r}")
    base_path = (path.parent / sweep.base).resolve()
    if not base_path.exists():
        raise ConfigError(f"base: no such config {sweep.base!r} (relative to {path.parent})")
    for key in sweep.set:
        _check_key(str(key), "set")
    base_cfg = load_config(base_path, [f"{k}={json.dumps(v)}" for k, v in sweep.set.items()])
    base = base_cfg.to_dict()
    if not sweep.space:
        raise ConfigError("space: expected a mapping of dotted config keys to distributions")
    space: dict[str, Distribution] = {}
    for key, spec in sweep.space.items():
        key = str(key)
        _check_key(key, "space")
        if key in sweep.set:
            raise ConfigError(f"space.{key}: also fixed in set:, give it in one place")
        dist = parse_distribution(key, spec)
        candidates = list(dist.args) if dist.kind in ("loguniform", "uniform") else dist.values
        for value in candidates:  # every candidate makes a valid config on its own
            try:
                config_from_dict(_set_dotted(copy.deepcopy(base), {key: value}))
            except ConfigError as err:
                raise ConfigError(f"space.{key}: {dist} gives a bad config: {err}") from None
        space[key] = dist
    result = Sweep(sweep, path, base, space)
    grid = len(result.grid)
    if sweep.trials < 1 or sweep.trials % grid:
        raise ConfigError(
            f"trials: must be a positive multiple of the {grid} grid points, got {sweep.trials}"
        )
    if sweep.resources.cpu <= 0 or sweep.resources.gpu < 0:
        raise ConfigError(f"resources: need cpu > 0 and gpu >= 0, got {sweep.resources}")
    if sweep.max_concurrent < 0:
        raise ConfigError(f"max_concurrent: must be >= 0, got {sweep.max_concurrent}")
    s = sweep.scheduler
    if s.type == "asha":
        if base_cfg.train.eval_interval <= 0:
            raise ConfigError(
                "scheduler.type: asha needs periodic evaluations (train.eval_interval > 0)"
            )
        grace = s.grace_period or base_cfg.train.eval_interval
        if not 0 < grace <= base_cfg.train.total_timesteps:
            raise ConfigError(
                f"scheduler.grace_period: must be in (0, train.total_timesteps = "
                f"{base_cfg.train.total_timesteps}], got {s.grace_period}"
            )
        if s.reduction_factor <= 1:
            raise ConfigError(f"scheduler.reduction_factor: must be > 1, got {s.reduction_factor}")
    return result


# ------------------------------------------------------------------------------ trials
def _tune_space(sweep: Sweep) -> dict[str, Any]:
    """The search space for Tune/Optuna. Choices travel as JSON text (Optuna's categorical
    values must be scalars); grid dimensions are not searched but repeated (Repeater)."""
    from ray import tune

    space: dict[str, Any] = {}
    for key, dist in sweep.space.items():
        if dist.kind == "loguniform":
            space[key] = tune.loguniform(*dist.args)
        elif dist.kind == "uniform":
            space[key] = tune.uniform(*dist.args)
        elif dist.kind == "choice":
            space[key] = tune.choice([json.dumps(v) for v in dist.values])
    return space


def trial_values(sweep: Sweep, config: dict[str, Any]) -> dict[str, Any]:
    """The dotted config values of a trial, from the config Tune gave it."""
    values: dict[str, Any] = {}
    for key, dist in sweep.space.items():
        if dist.kind == "choice":
            values[key] = json.loads(config[key])
        elif dist.kind in ("loguniform", "uniform"):
            values[key] = float(config[key])
    values.update(sweep.grid[int(config.get(TRIAL_INDEX, 0))])
    return values


def _metrics(result: dict[str, Any], steps: int) -> dict[str, Any]:
    regret = result.get("regret")
    return {
        "mean": float(result["mean"]),
        "ci95": float(result["ci95"]),
        "regret": float(regret["mean"]) if regret else math.nan,
        "timesteps": int(steps),
    }


def run_trial(config: dict[str, Any], sweep: Sweep, sweep_dir: str) -> None:
    """Tune's trainable: one normal training run in ``<sweep>/runs/<trial id>``, reporting
    every evaluation. A trial whose run folder is complete only reports its final evaluation
    (after a resume, nothing is trained twice); one with checkpoints continues from them."""
    from ray import tune

    from .run.folder import RunPaths
    from .train import train

    trial_id = tune.get_context().get_trial_id()
    cfg = sweep.trial_config(trial_values(sweep, config), f"{sweep.file.name}-{trial_id}")
    paths = RunPaths(Path(sweep_dir) / "runs" / trial_id)
    final = paths.eval_record(paths.final)

    def finished() -> dict[str, Any] | None:
        done = json.loads(final.read_text()) if final.exists() else None
        return done if done and done["timesteps"] >= cfg.train.total_timesteps else None

    def on_eval(result: dict[str, Any], steps: int) -> None:
        # The final evaluation is reported after `train` has written the run folder: Tune
        # stops a trial that reports max_t at once.
        if steps < cfg.train.total_timesteps:
            tune.report(_metrics(result, steps))

    if finished() is None:
        if sweep.file.metric == "regret":
            from yahtzee_env.solver import exact as solver

            solver.load_or_solve(cfg.env.rules)  # evaluations grade regret from the cache
        train(
            cfg,
            paths.root,
            resume=paths.config.exists(),
            progress=False,
            argv=["yahtzee", "sweep", str(sweep.path), f"(trial {trial_id})"],
            on_eval=on_eval,
            handle_signals=False,  # Ray owns a trial's signals
        )
    done = finished()
    regret = done.get("regret_per_game")
    result = {**done, "regret": {"mean": regret} if regret is not None else None}
    tune.report(_metrics(result, done["timesteps"]))


def _tuner(sweep: Sweep, sweep_dir: Path, resume: bool):
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler
    from ray.tune.search import ConcurrencyLimiter, Repeater
    from ray.tune.search.optuna import OptunaSearch

    trainable = tune.with_resources(
        tune.with_parameters(run_trial, sweep=sweep, sweep_dir=str(sweep_dir)),
        {"cpu": sweep.file.resources.cpu, "gpu": sweep.file.resources.gpu},
    )
    if resume:
        return tune.Tuner.restore(
            str(sweep_dir / TUNE_DIR), trainable, resume_unfinished=True, restart_errored=True
        )
    metric, mode = sweep.file.metric, sweep.mode
    searcher: Any = OptunaSearch(metric=metric, mode=mode, seed=sweep.file.seed)
    if len(sweep.grid) > 1:
        searcher = Repeater(searcher, repeat=len(sweep.grid), set_index=True)
    if sweep.file.max_concurrent:
        searcher = ConcurrencyLimiter(searcher, sweep.file.max_concurrent)
    scheduler = None
    s = sweep.file.scheduler
    if s.type == "asha":
        scheduler = ASHAScheduler(
            time_attr="timesteps",
            max_t=sweep.total_timesteps,
            grace_period=s.grace_period or int(sweep.base["train"]["eval_interval"]),
            reduction_factor=s.reduction_factor,
        )
    space = _tune_space(sweep)
    if not space:  # a pure grid: Optuna has nothing to suggest, Repeater supplies the index
        space = {"_": tune.choice(["grid"])}
    return tune.Tuner(
        trainable,
        param_space=space,
        tune_config=tune.TuneConfig(
            metric=metric,
            mode=mode,
            search_alg=searcher,
            scheduler=scheduler,
            num_samples=sweep.file.trials,
        ),
        run_config=tune.RunConfig(
            name=TUNE_DIR,
            storage_path=str(sweep_dir),
            failure_config=tune.FailureConfig(max_failures=2),
            verbose=1,
        ),
    )


def run_sweep(
    sweep: Sweep, sweep_dir: str | Path, *, address: str | None = None, resume: bool = False
) -> dict[str, Any]:
    """Run (or with ``resume`` continue) the sweep in ``sweep_dir``; write the results table,
    plot and best config there and return the summary."""
    from yahtzee_env.analysis.ray_backend import ray_session

    sweep_dir = Path(sweep_dir).resolve()
    tune_dir = sweep_dir / TUNE_DIR
    if resume and not (tune_dir / "experiment_state").exists():
        from ray.tune import Tuner

        if not Tuner.can_restore(str(tune_dir)):
            raise FileNotFoundError(f"{sweep_dir}: no sweep to resume there")
    if not resume and tune_dir.exists():
        raise FileExistsError(f"{sweep_dir} already has a sweep: continue it with --resume")
    sweep_dir.mkdir(parents=True, exist_ok=True)
    # Save Tune's experiment state often (it is small): a killed sweep resumes from there.
    os.environ.setdefault("TUNE_GLOBAL_CHECKPOINT_S", "2")
    atomic_write(sweep_dir / "sweep.yaml", sweep.path.read_text())
    with ray_session(address):
        results = _tuner(sweep, sweep_dir, resume).fit()
        rows = _rows(sweep, results, sweep_dir)
    return write_results(sweep, rows, sweep_dir)


# ------------------------------------------------------------------------------ results
def _rows(sweep: Sweep, results: Any, sweep_dir: Path) -> list[dict[str, Any]]:
    rows = []
    for result in results:
        metrics = result.metrics or {}
        trial_id = metrics.get("trial_id") or Path(result.path).name
        config = result.config or {}
        steps = metrics.get("timesteps")
        if result.error is not None:
            status = "error"
        elif steps is not None and steps >= sweep.total_timesteps:
            status = "completed"
        else:
            status = "stopped early"
        row = {"trial_id": trial_id, "status": status}
        row.update(trial_values(sweep, config) if config else {})
        row.update({k: metrics.get(k) for k in ("mean", "ci95", "regret", "timesteps")})
        row["run_dir"] = str(sweep_dir / "runs" / trial_id)
        rows.append(row)
    return sorted(rows, key=lambda r: r["trial_id"])


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def write_results(sweep: Sweep, rows: list[dict[str, Any]], sweep_dir: Path) -> dict[str, Any]:
    """results.csv/json, results.png (if matplotlib is there) and best.yaml; the summary."""
    metric, sign = sweep.file.metric, 1 if sweep.mode == "max" else -1
    ranked = [r for r in rows if r["status"] == "completed" and _finite(r[metric])]
    ranked.sort(key=lambda r: -sign * r[metric])
    best = ranked[0] if ranked else None
    summary = {
        "sweep": sweep.file.name,
        "metric": metric,
        "mode": sweep.mode,
        "trials": rows,
        "best": best,
        "space": {k: str(d) for k, d in sweep.space.items()},
    }
    atomic_write(sweep_dir / "results.json", json.dumps(summary, indent=2, default=str) + "\n")
    columns = ["trial_id", "status", *sweep.space, "mean", "ci95", "regret", "timesteps", "run_dir"]
    with open(sweep_dir / "results.csv.tmp", "w", newline="") as f:
        writer = csv.DictWriter(f, columns, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow(
                {k: json.dumps(v) if isinstance(v, list) else v for k, v in row.items()}
            )
    (sweep_dir / "results.csv.tmp").replace(sweep_dir / "results.csv")
    if best is not None:
        cfg = sweep.trial_config({k: best[k] for k in sweep.space}, f"{sweep.file.name}-best")
        data = cfg.to_dict()
        data["description"] = (
            f"best of sweep {sweep.file.name} by {metric} ({best[metric]:.3f}, trial "
            f"{best['trial_id']}); base {sweep.file.base}"
        )
        atomic_write(sweep_dir / "best.yaml", yaml.safe_dump(data, sort_keys=False))
    with contextlib.suppress(ImportError):  # the plot needs matplotlib (the plot extra)
        plot_results(sweep, rows, sweep_dir / "results.png")
    return summary


def _numeric(sweep: Sweep, key: str, values: list[Any]) -> tuple[np.ndarray, list[str] | None]:
    """A parameter's values on a numeric axis (log10 for loguniform; categories as indices)."""
    dist = sweep.space[key]
    if dist.kind in ("loguniform", "uniform"):
        x = np.asarray(values, dtype=float)
        return (np.log10(x) if dist.kind == "loguniform" else x), None
    labels = [json.dumps(v) for v in dist.values]
    return np.asarray([labels.index(json.dumps(v)) for v in values], dtype=float), labels


def top_parameters(sweep: Sweep, rows: list[dict[str, Any]], k: int = 4) -> list[str]:
    """The ``k`` parameters whose values rank-correlate most with the metric."""
    metric = sweep.file.metric
    usable = [r for r in rows if _finite(r.get(metric))]
    scores = {}
    for key in sweep.space:
        x, _ = _numeric(sweep, key, [r[key] for r in usable])
        y = np.asarray([r[metric] for r in usable], dtype=float)
        rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
        ok = len(usable) > 2 and rx.std() > 0 and ry.std() > 0
        scores[key] = abs(float(np.corrcoef(rx, ry)[0, 1])) if ok else 0.0
    return sorted(scores, key=lambda key: -scores[key])[:k]


def plot_results(sweep: Sweep, rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metric = sweep.file.metric
    keys = top_parameters(sweep, rows)
    usable = [r for r in rows if _finite(r.get(metric))]
    fig, axes = plt.subplots(1, len(keys), figsize=(4.2 * len(keys), 3.8), squeeze=False)
    for ax, key in zip(axes[0], keys, strict=True):
        for status, marker in (("completed", "o"), ("stopped early", "x"), ("error", "s")):
            part = [r for r in usable if r["status"] == status]
            if part:
                x, _ = _numeric(sweep, key, [r[key] for r in part])
                ax.scatter(x, [r[metric] for r in part], marker=marker, label=status)
        _, labels = _numeric(sweep, key, [r[key] for r in usable])
        if labels is not None:
            ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right")
        kind = sweep.space[key].kind
        ax.set_xlabel(f"log10 {key}" if kind == "loguniform" else key)
        ax.set_ylabel(f"eval {metric} (last report)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"sweep {sweep.file.name}: {len(rows)} trials")
    fig.tight_layout()
    tmp = path.with_name(path.name + ".tmp.png")
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    tmp.replace(path)


def format_summary(summary: dict[str, Any]) -> str:
    rows = summary["trials"]
    keys = list(summary["space"])
    metric = summary["metric"]
    lines = [f"sweep {summary['sweep']}: {len(rows)} trials, metric {metric} ({summary['mode']})"]
    for r in rows:
        params = ", ".join(f"{k}={_short(r.get(k))}" for k in keys)
        value = r.get(metric)
        shown = f"{value:8.3f}" if _finite(value) else "       -"
        lines.append(f"  {r['trial_id']:<14} {r['status']:<13} {shown}  {params}")
    best = summary["best"]
    if best:
        lines.append(f"best: {best['trial_id']} ({metric} {best[metric]:.3f})")
    return "\n".join(lines)


def _short(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, float) else json.dumps(value)
