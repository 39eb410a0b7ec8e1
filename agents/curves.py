"""Learning curves from run folders: the evaluations a training run logs, on common axes.

`collect(run_dir)` reads a run's TensorBoard log and returns one row per periodic evaluation:
env-steps, games played (estimated from the logged mean game length, see below), wall-clock
seconds since the run started, and the evaluation's mean, 95% CI, regret per game and upper
bonus / Yahtzee rates (the run's fixed-seed evaluation games, ``train.eval_games`` of them).
`at_marks` picks each run's last evaluation at or before fixed env-step marks, and `summarize`
gives the mean and spread across seeds at each mark: the benchmark a new method compares with.

Games: SB3 logs ``rollout/ep_len_mean`` (the mean length of the last 100 games) once per
rollout; games played ≈ Σ (env-steps of the rollout / that mean length). The game length
varies from 13 to 39 steps, so this estimate is within a few percent.

A run folder without its TensorBoard logs (the earlier sittings of a run continued across
sessions, whose logs were not kept) is read from its ``evals.jsonl`` (`collect_evals`): the
same evaluations, the games played not known (NaN, printed "—"), and the wall time from
``sessions.jsonl``, linear within each sitting.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from .run.folder import RunPaths

FIELDS = (
    "run",
    "seed",
    "steps",
    "games",
    "wall_seconds",
    "mean",
    "ci95",
    "regret",
    "upper_bonus_rate",
    "yahtzee_rate",
)
TAGS = {
    "mean": "eval/mean_score",
    "ci95": "eval/ci95",
    "regret": "eval/regret_per_game",
    "upper_bonus_rate": "eval/upper_bonus_rate",
    "yahtzee_rate": "eval/yahtzee_rate",
}


def _scalars(run_dir: Path) -> dict[str, list[tuple[int, float, float]]]:
    """(step, wall_time, value) per tag over every TensorBoard event file of a run."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out: dict[str, dict[int, tuple[float, float]]] = {}
    for events in sorted((run_dir / "tb").rglob("events.out.tfevents.*")):
        acc = EventAccumulator(str(events), size_guidance={"scalars": 0})
        acc.Reload()
        for tag in acc.Tags()["scalars"]:
            for e in acc.Scalars(tag):
                out.setdefault(tag, {})[e.step] = (e.wall_time, e.value)  # resumes: last wins
    return {tag: [(s, w, v) for s, (w, v) in sorted(d.items())] for tag, d in out.items()}


def collect(run_dir: str | Path) -> list[dict[str, float | int | str]]:
    """One row per evaluation of a run (see the module docstring); a run folder of the
    model-based baseline (`yahtzee_agents.model_based`: ``curve.jsonl``) is read too."""
    import yaml

    run_dir = Path(run_dir)
    if (run_dir / "curve.jsonl").exists():
        return collect_model_based(run_dir)
    if (
        not any((run_dir / "tb").rglob("events.out.tfevents.*"))
        and RunPaths(run_dir).evals.exists()
    ):
        return collect_evals(run_dir)
    cfg = yaml.safe_load(RunPaths(run_dir).config.read_text())
    scalars = _scalars(run_dir)
    if TAGS["mean"] not in scalars:
        raise ValueError(f"{run_dir}: no evaluations logged yet")
    lengths = scalars.get("rollout/ep_len_mean", [])
    start = min(w for series in scalars.values() for _, w, _ in series)
    start -= _first_interval(scalars)  # the first event is logged after one rollout
    games_at: list[tuple[int, float]] = [(0, 0.0)]
    for step, _, length in lengths:
        prev_step, prev_games = games_at[-1]
        games_at.append((step, prev_games + (step - prev_step) / max(length, 1.0)))
    by_step = {
        key: {step: value for step, _, value in scalars.get(TAGS[key], [])}
        for key in ("ci95", "regret", "upper_bonus_rate", "yahtzee_rate")
    }
    rows = []
    for step, wall, mean in scalars[TAGS["mean"]]:
        row: dict[str, float | int | str] = {
            "run": run_dir.name,
            "seed": cfg["train"]["seed"],
            "steps": step,
            "games": round(_interpolate(games_at, step)),
            "wall_seconds": round(wall - start, 1),
            "mean": mean,
        }
        for key in ("ci95", "regret", "upper_bonus_rate", "yahtzee_rate"):
            # by step, not by position: an evaluation may log no regret (no solver table)
            row[key] = by_step[key].get(step, math.nan)
        rows.append(row)
    return rows


def collect_evals(run_dir: str | Path) -> list[dict[str, float | int | str]]:
    """The rows of a run folder from its ``evals.jsonl`` (every evaluation, kept across
    sittings) and ``sessions.jsonl`` (each sitting's wall seconds and the env-steps it ended
    at): the wall time at an evaluation is the earlier sittings' plus its own sitting's, in
    proportion to the env-steps it had done (evaluations included); the games played are not
    recorded there (NaN)."""
    import json

    import yaml

    run_dir = Path(run_dir)
    seed = yaml.safe_load(RunPaths(run_dir).config.read_text())["train"]["seed"]
    sittings, start, wall = [], 0, 0.0  # (first step, last step, wall before, its wall)
    path = RunPaths(run_dir).sessions
    for line in path.read_text().splitlines() if path.exists() else []:
        s = json.loads(line)
        sittings.append((start, int(s["end_timesteps"]), wall, float(s["wall_seconds"])))
        start, wall = int(s["end_timesteps"]), wall + float(s["wall_seconds"])

    def wall_at(step: int) -> float:
        for first, last, before, own in sittings:
            if step <= last:
                return before + own * (step - first) / max(last - first, 1)
        return math.nan  # after the last recorded sitting (a sitting still running)

    rows: list[dict[str, float | int | str]] = []
    for line in RunPaths(run_dir).evals.read_text().splitlines():
        e = json.loads(line)
        rows.append(
            {
                "run": run_dir.name,
                "seed": seed,
                "steps": int(e["timesteps"]),
                "games": math.nan,
                "wall_seconds": round(wall_at(int(e["timesteps"])), 1),
                "mean": e["mean"],
                "ci95": e["ci95"],
                "regret": e.get("regret_per_game", math.nan),
                "upper_bonus_rate": e["upper_bonus_rate"],
                "yahtzee_rate": e["yahtzee_rate"],
            }
        )
    if not rows:
        raise ValueError(f"{run_dir}: no evaluations logged yet")
    return rows


def collect_model_based(run_dir: Path) -> list[dict[str, float | int | str]]:
    """The rows of a model-based run: its games and env-steps are counted exactly, and its
    wall time is the learning time (evaluations excluded)."""
    import json

    seed = json.loads((run_dir / "config.json").read_text())["seed"]
    rows: list[dict[str, float | int | str]] = []
    for line in (run_dir / "curve.jsonl").read_text().splitlines():
        r = json.loads(line)
        rows.append(
            {
                "run": run_dir.name,
                "seed": seed,
                "steps": r["env_steps"],
                "games": r["games"],
                "wall_seconds": r["seconds"],
                "mean": r["mean"],
                "ci95": r["ci95"],
                "regret": r["regret_per_game"],
                "upper_bonus_rate": r["upper_bonus_rate"],
                "yahtzee_rate": r["yahtzee_rate"],
            }
        )
    if not rows:
        raise ValueError(f"{run_dir}: no evaluations logged yet")
    return rows


def continue_rows(
    earlier: list[dict], later: list[dict], sessions: Sequence[dict] = ()
) -> list[dict]:
    """One run's rows from a sitting resumed from a checkpoint (``later``, as `collect` reads
    that sitting's own logs: the earlier sittings' logs are not kept) joined onto its rows from
    the earlier sittings (``earlier``, from the committed data). The later rows' wall time is
    shifted by the earlier sittings' training time (``sessions``: the run's sessions.jsonl, the
    sittings that ended before the later rows begin; without them, the last earlier row's wall
    time), so that it counts training and not the hours between sittings; their games, which
    `collect` counts from step 0, continue the last earlier row's. Earlier rows at or past the
    first later step are dropped (the resumed run logs them again)."""
    if not later:
        return list(earlier)
    first = min(int(r["steps"]) for r in later)
    kept = sorted((r for r in earlier if int(r["steps"]) < first), key=lambda r: r["steps"])
    if not kept:
        return sorted(later, key=lambda r: r["steps"])
    last = kept[-1]
    before = [float(s["wall_seconds"]) for s in sessions if int(s["end_timesteps"]) < first]
    wall0 = sum(before) if before else float(last["wall_seconds"])
    later = sorted(later, key=lambda r: r["steps"])
    points = [(0, 0.0)] + [(int(r["steps"]), float(r["games"])) for r in later]
    games0 = float(last["games"]) - _interpolate(points, int(last["steps"]))
    shifted = [
        {
            **r,
            "wall_seconds": round(wall0 + float(r["wall_seconds"]), 1),
            "games": round(float(r["games"]) + games0),
        }
        for r in later
    ]
    return kept + shifted


def continue_runs(
    rows: list[dict], run_dirs: Sequence[str | Path]
) -> list[dict[str, float | int | str]]:
    """The committed ``rows`` with each run folder's newest sitting joined on (`continue_rows`;
    the folder's name is the run's name in ``rows``); the other runs' rows are kept as they
    are."""
    import json

    joined: dict[str, list[dict]] = {}
    for run_dir in map(Path, run_dirs):
        sessions_file = RunPaths(run_dir).sessions
        sessions = (
            [json.loads(line) for line in sessions_file.read_text().splitlines() if line.strip()]
            if sessions_file.exists()
            else []
        )
        mine = [r for r in rows if r["run"] == run_dir.name]
        joined[run_dir.name] = continue_rows(mine, collect(run_dir), sessions)
    out: list[dict] = []
    placed: set[str] = set()
    for row in rows:  # each run where its rows were, a new one at the end
        run = str(row["run"])
        if run not in joined:
            out.append(row)
        elif run not in placed:
            out += joined[run]
            placed.add(run)
    return out + [r for run, series in joined.items() if run not in placed for r in series]


def _first_interval(scalars: dict[str, list[tuple[int, float, float]]]) -> float:
    fps = scalars.get("time/fps", [])
    if not fps:
        return 0.0
    # SB3's fps counts from the sitting's first step: the first rollout's size is the step of
    # the first log in a new run, and the gap between the first two logs in a resumed one
    step, _, value = fps[0]
    size = fps[1][0] - step if len(fps) > 1 else step
    return size / value if value > 0 else 0.0


def _interpolate(points: Sequence[tuple[int, float]], step: int) -> float:
    xs = np.array([p[0] for p in points], dtype=float)
    ys = np.array([p[1] for p in points], dtype=float)
    return float(np.interp(step, xs, ys))


def write_csv(rows: Iterable[dict], path: str | Path) -> None:
    from yahtzee_env.fileio import atomic_write

    lines = [",".join(FIELDS)]
    for row in rows:
        lines.append(",".join(_fmt(row[k]) for k in FIELDS))
    atomic_write(Path(path), "\n".join(lines) + "\n")


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def read_csv(path: str | Path) -> list[dict[str, float | int | str]]:
    rows = []
    with open(path, newline="") as f:
        for raw in csv.DictReader(f):
            row: dict[str, float | int | str] = {"run": raw["run"]}
            for key in FIELDS[1:]:
                value = float(raw[key])
                integral = key in ("seed", "steps", "games") and math.isfinite(value)
                row[key] = int(value) if integral else value  # games may be unknown: nan
            rows.append(row)
    return rows


def _by_run(rows: list[dict]) -> dict[str, list[dict]]:
    """Each run's rows, in step order."""
    by_run: dict[str, list[dict]] = {}
    for row in rows:
        by_run.setdefault(str(row["run"]), []).append(row)
    for series in by_run.values():
        series.sort(key=lambda r: r["steps"])
    return by_run


def at_marks(rows: list[dict], marks: Sequence[int]) -> dict[str, dict[int, dict]]:
    """For each run, its last evaluation at or before each mark (runs that have not reached
    a mark, within 2% of it, have no entry for it)."""
    picked: dict[str, dict[int, dict]] = {}
    for run, series in _by_run(rows).items():
        for mark in marks:
            before = [r for r in series if r["steps"] <= mark * 1.02]
            if before and before[-1]["steps"] >= mark * 0.9:
                picked.setdefault(run, {})[mark] = before[-1]
    return picked


def summarize(
    rows: list[dict], marks: Sequence[int], every_run: bool = True
) -> list[dict[str, float | int]]:
    """Mean and spread across runs (seeds) at each mark that every run reached (with
    ``every_run=False``, that any run reached: ``runs`` says over how many)."""
    picked = at_marks(rows, marks)
    out = []
    for mark in marks:
        at = [p[mark] for p in picked.values() if mark in p]
        if not at or (every_run and len(at) < len(picked)):
            continue
        means = np.array([r["mean"] for r in at])
        regrets = np.array([r["regret"] for r in at])
        out.append(
            {
                "steps": mark,
                "runs": len(at),
                "games": float(np.mean([r["games"] for r in at])),
                "wall_seconds": float(np.mean([r["wall_seconds"] for r in at])),
                "mean": float(means.mean()),
                "mean_min": float(means.min()),
                "mean_max": float(means.max()),
                "mean_std": float(means.std(ddof=1)) if len(at) > 1 else 0.0,
                "ci95_eval": float(np.mean([r["ci95"] for r in at])),
                "regret": float(regrets.mean()),
                "upper_bonus_rate": float(np.mean([r["upper_bonus_rate"] for r in at])),
            }
        )
    return out


def evaluation_at(run_dir: str | Path, steps: int) -> dict[str, float | int] | None:
    """The run's own evaluation logged at ``steps`` env-steps (mean, CI, rates and regret, in
    the keys of the ``eval.json`` next to a best model), or None if none was logged there.
    A run graded by its win rate at a table (``evals.jsonl`` rows without a ``mean``, as
    `configs/winner.yaml` writes them) gets its logged row as it is."""
    import json

    evals = RunPaths(run_dir).evals
    if evals.exists():
        logged = [json.loads(line) for line in evals.read_text().splitlines() if line.strip()]
        at = [e for e in logged if e.get("timesteps") == steps]
        if logged and "mean" not in logged[0]:
            return at[-1] if at else None
    for row in collect(run_dir):
        if row["steps"] == steps:
            return {
                "mean": row["mean"],
                "ci95": row["ci95"],
                "upper_bonus_rate": row["upper_bonus_rate"],
                "yahtzee_rate": row["yahtzee_rate"],
                "regret_per_game": row["regret"],
                "timesteps": steps,
            }
    return None


def first_reaching(
    rows: list[dict], optimum: float | dict[str, float], targets: Sequence[float]
) -> dict[str, dict[float, dict | None]]:
    """Per run, its first evaluation whose expected score (the optimum of the run's rules -
    regret per game) is at least each target (None: never reached). ``optimum`` is one
    number for every run, or run name -> the optimum of its rules (`run_optimum`)."""
    out: dict[str, dict[float, dict | None]] = {}
    for run, series in sorted(_by_run(rows).items()):
        best = optimum[run] if isinstance(optimum, dict) else optimum
        out[run] = {t: next((r for r in series if best - r["regret"] >= t), None) for t in targets}
    return out


def run_rules(run_dir: str | Path) -> str:
    """The rules preset a run folder learned (``config.yaml``'s ``env.rules``, or a
    model-based run's ``config.json`` ``rules``; official when the file says none)."""
    import json

    import yaml

    run_dir = Path(run_dir)
    if (run_dir / "config.json").exists() and not RunPaths(run_dir).config.exists():
        return json.loads((run_dir / "config.json").read_text()).get("rules", "official")
    cfg = yaml.safe_load(RunPaths(run_dir).config.read_text())
    return (cfg.get("env") or {}).get("rules", "official")


def rules_in_name(run: str) -> str:
    """The rules preset a run's name says (``ppo-upper-first-s0`` -> ``upper-first``: the
    longest preset named as a ``-``-separated part), else ``official``: how rows read from a
    CSV, which has no rules column, are given their optimum."""
    from yahtzee_env.game.rules import PRESETS

    parts = f"-{run}-"
    named = [p for p in PRESETS if f"-{p}-" in parts]
    return max(named, key=len) if named else "official"


def rules_optimum(rules: str) -> float:
    """The expected score of optimal play under the preset ``rules`` (the solver's cached
    table; solved where it is not cached, a few seconds)."""
    from yahtzee_env.game.rules import RuleSet
    from yahtzee_env.solver import exact

    return float(exact.load_or_solve(RuleSet.from_spec(rules)).expected_score)


def run_optimum(run_dir: str | Path) -> float:
    """The expected score of optimal play under the run's rules (the solver's cached table;
    solved here, a few seconds, where it is not cached): what its regret is counted against."""
    from yahtzee_env.game.rules import RuleSet
    from yahtzee_env.solver import exact

    return float(exact.load_or_solve(RuleSet.from_spec(run_rules(run_dir))).expected_score)


def recipe_of(run: str) -> str:
    """Runs of one recipe differ only in seed: ``ppo-s0``, ``ppo-s1`` -> ``ppo``."""
    head, sep, tail = run.rpartition("-s")
    return head if sep and tail.isdigit() else run


ANCHORS = (
    (254.59, "optimal (exact solver)"),
    (244.87, "Glenn's best heuristic"),
    (241.8, "best published RL (A2C, arXiv 2601.00007)"),
)


def markdown_table(summary: list[dict], recipe: str) -> str:
    lines = [
        "| recipe | env-steps | games | wall time | runs | eval mean (mean of seeds) | "
        "seed range | regret/game | upper bonus |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in summary:
        games = f"{s['games'] / 1e3:,.0f} k" if math.isfinite(s["games"]) else "—"
        wall = f"{s['wall_seconds'] / 60:.0f} min" if math.isfinite(s["wall_seconds"]) else "—"
        lines.append(
            f"| {recipe} | {s['steps'] / 1e6:g} M | {games} | {wall} | {s['runs']} | "
            f"{s['mean']:.1f} ± {s['ci95_eval']:.1f} | {s['mean_min']:.1f}–{s['mean_max']:.1f} | "
            f"{s['regret']:.1f} | {100 * s['upper_bonus_rate']:.0f}% |"
        )
    return "\n".join(lines)


def plot(rows: list[dict], path: str | Path, log_steps: bool = False) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    recipes: dict[str, dict[str, list[dict]]] = {}
    for row in rows:
        recipes.setdefault(recipe_of(str(row["run"])), {}).setdefault(str(row["run"]), []).append(
            row
        )
    # one colour per recipe (tab20 has 20; past that they repeat, no recipe is left out)
    colors = [plt.get_cmap("tab20")(i % 20) for i in range(len(recipes))]
    for color, (recipe, runs) in zip(colors, sorted(recipes.items()), strict=True):
        for i, (_, series) in enumerate(sorted(runs.items())):
            series.sort(key=lambda r: r["steps"])
            ax.plot(
                [r["steps"] / 1e6 for r in series],
                [r["mean"] for r in series],
                color=color,
                alpha=0.8,
                lw=1.2,
                label=f"{recipe} ({len(runs)} seed{'s' if len(runs) > 1 else ''})"
                if i == 0
                else None,
            )
    for value, label in ANCHORS:
        ax.axhline(value, ls="--", lw=0.9, color="gray")
        ax.text(
            0.01,
            value + 0.6,
            f"{label} {value}",
            fontsize=8,
            color="dimgray",
            transform=ax.get_yaxis_transform(),
        )
    if log_steps:
        ax.set_xscale("log")
    ax.set_xlabel("env-steps (millions)" + (", log scale" if log_steps else ""))
    ax.set_ylabel("evaluation mean score (4,000 fixed games)")
    ax.set_title("Learning Yahtzee-v0 from play: learning curves")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
