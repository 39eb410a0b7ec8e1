"""Aggregate reports over seeds (``yahtzee report RUN_OR_ROW...``): interquartile means with
stratified-bootstrap 95% CIs, as a Markdown and a LaTeX table, and a performance profile.

    from yahtzee_env.analysis.report import load_scores, aggregate, markdown_table
    groups = load_scores(["data/runs/ppo1m-s0", "data/runs/ppo1m-s1", "data/runs/ppo1m-s2"])
    print(markdown_table(aggregate(groups)))

The method is rliable's (Agarwal et al., "Deep Reinforcement Learning at the Edge of the
Statistical Precipice", NeurIPS 2021; github.com/google-research/rliable): a group's score is
a matrix of runs (seeds) by tasks (here the rules presets); its IQM is the mean of the middle
50% of all its scores (`scipy.stats.trim_mean(x, 0.25)`: ``int(0.25 n)`` cut from each end);
its 95% CI is the percentile interval of `REPS` stratified bootstrap resamples (each task's
runs resampled with replacement, separately). Implemented here in numpy with a seeded
generator, so a report is the same every time (rliable draws from numpy's global one); the
tests check the point estimates against rliable's, and the intervals on rliable's own
resamples (the same to 1e-9) and on its own draws (within Monte Carlo error).

An input is a run folder (its evaluations' last mean, on the run's own fixed games) or a
benchmark row (its expected score, or ``--metric mean``). Inputs with the same label are one
group's runs: the label is given as ``LABEL=PATH``, else the run's config name or the row's
agent (`agent_label`), without its ``-s<seed>`` suffix: the seeds of one recipe are one group,
and rows of three agents in one folder are three.

Every group names its metric (``benchmark expected score, 10,000 games`` is not ``evaluation
mean, 4,000 games``: another statistic on other games) and its track (what its agents knew,
`yahtzee_env.policies.knowledge.track`); a group whose inputs differ in either is refused, and
the tables carry both as columns. A group of one run has no interval: ``n/a``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

REPS = 2_000
SEED = 0
_SEED_SUFFIX = re.compile(r"-s\d+$")


@dataclass
class Group:
    label: str
    scores: dict[str, list[float]]  # task (rules) -> one score per run
    metric: str
    track: str = "not stated"

    def matrix(self) -> np.ndarray:
        """[runs, tasks]; every task must have the same number of runs."""
        counts = {len(v) for v in self.scores.values()}
        if len(counts) != 1:
            raise ValueError(f"{self.label}: the tasks have different numbers of runs {counts}")
        return np.array([self.scores[t] for t in sorted(self.scores)], dtype=np.float64).T


def _run_track(config: Path) -> str:
    """A run folder's track from its config.yaml (the facts its exported model would state),
    or ``not stated`` where the config cannot be read (no `train` extra, no config)."""
    from yahtzee_env.policies.knowledge import track

    try:
        from yahtzee_agents.config import load_config
        from yahtzee_agents.run.folder import model_facts

        return track(model_facts(load_config(config), 1)["knew"])
    except (ImportError, OSError, ValueError):  # no train extra, or a config it refuses
        return "not stated"


def agent_label(agent: str) -> str:
    """A row's agent as a group's label, without ``-s<seed>``: its name, or for a model file
    its run (the folder after ``runs/``) or else the file's stem."""
    parts = Path(agent).parts
    if len(parts) > 1 or agent.endswith((".json", ".zip", ".npz", ".onnx")):
        runs = [i for i, part in enumerate(parts[:-1]) if part == "runs"]
        agent = parts[runs[-1] + 1] if runs and runs[-1] + 1 < len(parts) - 1 else Path(agent).stem
    return _SEED_SUFFIX.sub("", agent)


def _label_and_score(path: Path, metric: str) -> tuple[str, str, float, str, str]:
    """(default label, task, score, metric name, track) of one input."""
    if path.is_dir():
        evals = path / "evals.jsonl"
        if not evals.is_file():
            raise ValueError(f"{path}: a run folder has evals.jsonl")
        lines = [json.loads(x) for x in evals.read_text().splitlines() if x.strip()]
        if not lines:
            raise ValueError(f"{path}/evals.jsonl: no evaluation yet")
        name = path.name
        config = path / "config.yaml"
        if config.is_file():
            found = re.search(r"^name:\s*(\S+)", config.read_text(), re.M)
            name = found.group(1) if found else name
        rules = "official"
        if config.is_file():
            found = re.search(r"^\s+rules:\s*(\S+)", config.read_text(), re.M)
            rules = found.group(1) if found else rules
        key = "regret_per_game" if metric == "regret" else "mean"
        last = lines[-1]
        games = f", {last['games']:,} games" if isinstance(last.get("games"), int) else ""
        what = f"evaluation {'regret per game' if metric == 'regret' else 'mean'}{games}"
        found = _run_track(config) if config.is_file() else "not stated"
        return _SEED_SUFFIX.sub("", name), rules, float(last[key]), what, found
    try:
        row = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise ValueError(f"{path}: not a run folder or a JSON row ({err})") from None
    if not isinstance(row, dict) or "mean" not in row:
        raise ValueError(f"{path}: not a benchmark row (no 'mean')")
    key = {"expected": "expected_score", "mean": "mean", "regret": "regret_per_game"}[metric]
    if key not in row:
        raise ValueError(f"{path}: the row has no {key!r}")
    label = agent_label(str(row.get("agent") or path.stem))
    names = {"expected_score": "expected score", "mean": "mean", "regret_per_game":
             "regret per game"}  # fmt: skip
    games = f", {row['games']:,} games" if isinstance(row.get("games"), int) else ""
    what = f"benchmark {names[key]}{games}"
    return (
        label,
        row.get("rules", "official"),
        float(row[key]),
        what,
        row.get("track", "not stated"),
    )


def load_scores(inputs: Sequence[str | os.PathLike], metric: str = "expected") -> list[Group]:
    """Groups (in order of first appearance) from ``LABEL=PATH`` or ``PATH`` inputs."""
    if metric not in ("expected", "mean", "regret"):
        raise ValueError(f"metric must be expected, mean or regret, got {metric!r}")
    groups: dict[str, Group] = {}
    for item in inputs:
        text = os.fspath(item)
        label, sep, rest = text.partition("=")
        path = Path(rest if sep else text)
        if not path.exists():
            raise ValueError(f"{path}: no such run folder or row")
        default, task, score, what, found = _label_and_score(path, metric)
        name = label if sep else default
        group = groups.setdefault(name, Group(name, {}, what, found))
        if (what, found) != (group.metric, group.track):
            raise ValueError(
                f"{path}: {name!r} mixes metrics or tracks ({what}, {found}; its first input: "
                f"{group.metric}, {group.track}): give it its own label (LABEL=PATH)"
            )
        group.scores.setdefault(task, []).append(score)
    return list(groups.values())


def iqm(scores: np.ndarray) -> float:
    """Interquartile mean of all of ``scores``, as `scipy.stats.trim_mean(x, 0.25)`."""
    x = np.sort(np.asarray(scores, dtype=np.float64).ravel())
    cut = int(0.25 * x.size)
    return float(x[cut : x.size - cut].mean())


def stratified_resamples(runs: int, tasks: int, reps: int = REPS, seed: int = SEED) -> np.ndarray:
    """The run picked for each place of each resample (int [reps, runs, tasks]): each task's
    runs drawn with replacement on their own (rliable's `StratifiedBootstrap`)."""
    return np.random.default_rng(seed).integers(0, runs, size=(reps, runs, tasks))


def percentile_interval(
    scores: np.ndarray, picks: np.ndarray, statistic=iqm, size: float = 0.95
) -> tuple[float, float]:
    """Percentile interval of ``statistic`` over the resamples ``picks`` of the [runs, tasks]
    matrix (``picks[k, r, t]``: the run in place r of task t in resample k), as arch's
    ``conf_int(method="percentile")`` computes it."""
    resampled = np.take_along_axis(scores[None], picks, axis=1)
    values = np.array([statistic(r) for r in resampled])
    lo, hi = np.percentile(values, [100 * (1 - size) / 2, 100 * (1 + size) / 2])
    return float(lo), float(hi)


def stratified_bootstrap_ci(
    scores: np.ndarray, statistic=iqm, reps: int = REPS, seed: int = SEED, size: float = 0.95
) -> tuple[float, float]:
    """Percentile interval of ``statistic`` over ``reps`` seeded stratified bootstrap
    resamples of the [runs, tasks] matrix; (nan, nan) for fewer than 2 runs."""
    runs, tasks = scores.shape
    if runs < 2:  # one run resampled is itself: no interval, not a zero-width one
        return float("nan"), float("nan")
    return percentile_interval(
        scores, stratified_resamples(runs, tasks, reps, seed), statistic, size
    )


def aggregate(groups: Sequence[Group], reps: int = REPS, seed: int = SEED) -> list[dict[str, Any]]:
    """Per group: runs, tasks, IQM and mean with their stratified-bootstrap 95% CIs, median,
    min and max, and the scores themselves (for the profile)."""
    out = []
    for g in groups:
        m = g.matrix()
        out.append(
            {
                "label": g.label,
                "metric": g.metric,
                "track": g.track,
                "runs": m.shape[0],
                "tasks": sorted(g.scores),
                "iqm": iqm(m),
                "iqm_ci95": stratified_bootstrap_ci(m, iqm, reps, seed),
                "mean": float(m.mean()),
                "mean_ci95": stratified_bootstrap_ci(m, lambda x: float(x.mean()), reps, seed),
                "median": float(np.median(m)),
                "min": float(m.min()),
                "max": float(m.max()),
                "scores": m.ravel().tolist(),
            }
        )
    return out


def _interval(low: float, high: float) -> str:
    """``[low, high]``, or ``n/a`` where there is none (fewer than 2 runs)."""
    if np.isnan(low) or np.isnan(high):
        return "n/a"
    return f"[{low:.2f}, {high:.2f}]"


def markdown_table(rows: Sequence[dict[str, Any]]) -> str:
    """One line per group with its metric and track (a group of one run: CI ``n/a``)."""
    lines = [
        "| agent | track | metric | runs | IQM [95% CI] | mean [95% CI] | median | min–max |",
        "|---|---|---|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['label']} | {r['track']} | {r['metric']} | {r['runs']} | {r['iqm']:.2f} "
            f"{_interval(*r['iqm_ci95'])} | {r['mean']:.2f} {_interval(*r['mean_ci95'])} | "
            f"{r['median']:.2f} | {r['min']:.2f}–{r['max']:.2f} |"
        )
    return "\n".join(lines)


def _tex(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"),
                 ("#", r"\#"), ("$", r"\$"), ("`", ""), ("×", r"$\times$")):  # fmt: skip
        text = text.replace(a, b)
    return text


def latex_table(rows: Sequence[dict[str, Any]], caption: str = "") -> str:
    """A booktabs table (``\\usepackage{booktabs}``) to paste into a paper."""
    metrics = list(dict.fromkeys(r["metric"] for r in rows)) or ["score"]
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\begin{tabular}{lllrrrr}",
        r"\toprule",
        r"Agent & Track & Metric & Runs & IQM [95\% CI] & Mean [95\% CI] & Median \\",
        r"\midrule",
    ]
    for r in rows:
        lines.append(
            f"{_tex(r['label'])} & {_tex(r['track'])} & {_tex(r['metric'])} & {r['runs']} & "
            f"{r['iqm']:.2f} {_interval(*r['iqm_ci95'])} & {r['mean']:.2f} "
            f"{_interval(*r['mean_ci95'])} & {r['median']:.2f} \\\\"
        )
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{_tex(caption or '; '.join(metrics))}: interquartile mean over runs with "
        rf"stratified-bootstrap 95\% CIs ({REPS:,} resamples; Agarwal et al., 2021; n/a: a "
        rf"single run).}}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def performance_profile(scores: Sequence[float], thresholds: np.ndarray) -> np.ndarray:
    """The fraction of runs whose score is above each threshold."""
    s = np.asarray(scores, dtype=np.float64)
    return (s[None, :] > np.asarray(thresholds)[:, None]).mean(axis=1)


def plot_profiles(rows: Sequence[dict[str, Any]], path: str | os.PathLike) -> None:
    """The performance profiles of the groups (a PNG; needs the plot extra)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from yahtzee_env.fileio import atomic_path

    everything = np.concatenate([np.asarray(r["scores"]) for r in rows])
    pad = max(1.0, 0.05 * float(np.ptp(everything)))
    tau = np.linspace(everything.min() - pad, everything.max() + pad, 400)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for r in rows:
        ax.step(tau, performance_profile(r["scores"], tau), where="post",
                label=f"{r['label']} ({r['runs']} runs)")  # fmt: skip
    ax.set_xlabel(rows[0]["metric"] if rows else "score")
    ax.set_ylabel("fraction of runs with score > τ")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Performance profile")
    ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
