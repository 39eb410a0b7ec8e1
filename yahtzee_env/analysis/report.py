"""Aggregate reports over seeds (``yahtzee report RUN_OR_ROW...``): interquartile means with
stratified-bootstrap 95% CIs, as a Markdown and a LaTeX table, and a performance profile.

    from yahtzee_env.analysis.report import load_scores, aggregate, markdown_table
    groups = load_scores(["docs/runs/ppo1m-s0", "docs/runs/ppo1m-s1", "docs/runs/ppo1m-s2"])
    print(markdown_table(aggregate(groups)))

The method is rliable's (Agarwal et al., "Deep Reinforcement Learning at the Edge of the
Statistical Precipice", NeurIPS 2021; github.com/google-research/rliable): a group's score is
a matrix of runs (seeds) by tasks (here the rules presets); its IQM is the mean of the middle
50% of all its scores (`scipy.stats.trim_mean(x, 0.25)`: ``int(0.25 n)`` cut from each end);
its 95% CI is the percentile interval of `REPS` stratified bootstrap resamples (each task's
runs resampled with replacement, separately). Implemented here in numpy with a seeded
generator, so a report is the same every time (rliable draws from an unseeded one); the tests
check the point estimates against rliable's where it is installed.

An input is a run folder (its evaluations' last mean, on the run's own fixed games) or a
benchmark row (its expected score, or ``--metric mean``). Inputs with the same label are one
group's runs: the label is given as ``LABEL=PATH``, else the run's config name or the row's
folder without its ``-s<seed>`` suffix.
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

    def matrix(self) -> np.ndarray:
        """[runs, tasks]; every task must have the same number of runs."""
        counts = {len(v) for v in self.scores.values()}
        if len(counts) != 1:
            raise ValueError(f"{self.label}: the tasks have different numbers of runs {counts}")
        return np.array([self.scores[t] for t in sorted(self.scores)], dtype=np.float64).T


def _label_and_score(path: Path, metric: str) -> tuple[str, str, float, str]:
    """(default label, task, score, metric name) of one input."""
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
        return _SEED_SUFFIX.sub("", name), rules, float(lines[-1][key]), f"evaluation {key}"
    try:
        row = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise ValueError(f"{path}: not a run folder or a JSON row ({err})") from None
    if not isinstance(row, dict) or "mean" not in row:
        raise ValueError(f"{path}: not a benchmark row (no 'mean')")
    key = {"expected": "expected_score", "mean": "mean", "regret": "regret_per_game"}[metric]
    if key not in row:
        raise ValueError(f"{path}: the row has no {key!r}")
    label = row.get("description") or _SEED_SUFFIX.sub("", path.parent.name)
    return label, row.get("rules", "official"), float(row[key]), f"benchmark {key}"


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
        default, task, score, what = _label_and_score(path, metric)
        name = label if sep else default
        group = groups.setdefault(name, Group(name, {}, what))
        group.scores.setdefault(task, []).append(score)
    return list(groups.values())


def iqm(scores: np.ndarray) -> float:
    """Interquartile mean of all of ``scores``, as `scipy.stats.trim_mean(x, 0.25)`."""
    x = np.sort(np.asarray(scores, dtype=np.float64).ravel())
    cut = int(0.25 * x.size)
    return float(x[cut : x.size - cut].mean())


def stratified_bootstrap_ci(
    scores: np.ndarray, statistic=iqm, reps: int = REPS, seed: int = SEED, size: float = 0.95
) -> tuple[float, float]:
    """Percentile interval of ``statistic`` over stratified bootstrap resamples of the
    [runs, tasks] matrix: each task's column resampled with replacement on its own."""
    runs, tasks = scores.shape
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, runs, size=(reps, runs, tasks))
    resampled = np.take_along_axis(scores[None], picks, axis=1)
    values = np.array([statistic(r) for r in resampled])
    lo, hi = np.percentile(values, [100 * (1 - size) / 2, 100 * (1 + size) / 2])
    return float(lo), float(hi)


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


def markdown_table(rows: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| agent | runs | IQM [95% CI] | mean [95% CI] | median | min–max |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        lo, hi = r["iqm_ci95"]
        mlo, mhi = r["mean_ci95"]
        lines.append(
            f"| {r['label']} | {r['runs']} | {r['iqm']:.2f} [{lo:.2f}, {hi:.2f}] | "
            f"{r['mean']:.2f} [{mlo:.2f}, {mhi:.2f}] | {r['median']:.2f} | "
            f"{r['min']:.2f}–{r['max']:.2f} |"
        )
    return "\n".join(lines)


def _tex(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"),
                 ("#", r"\#"), ("$", r"\$"), ("`", ""), ("×", r"$\times$")):  # fmt: skip
        text = text.replace(a, b)
    return text


def latex_table(rows: Sequence[dict[str, Any]], caption: str = "") -> str:
    """A booktabs table (``\\usepackage{booktabs}``) to paste into a paper."""
    metric = rows[0]["metric"] if rows else "score"
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\begin{tabular}{lrrrr}",
        r"\toprule",
        r"Agent & Runs & IQM [95\% CI] & Mean [95\% CI] & Median \\",
        r"\midrule",
    ]
    for r in rows:
        lo, hi = r["iqm_ci95"]
        mlo, mhi = r["mean_ci95"]
        lines.append(
            f"{_tex(r['label'])} & {r['runs']} & {r['iqm']:.2f} [{lo:.2f}, {hi:.2f}] & "
            f"{r['mean']:.2f} [{mlo:.2f}, {mhi:.2f}] & {r['median']:.2f} \\\\"
        )
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{_tex(caption or metric)}: interquartile mean over runs with "
        rf"stratified-bootstrap 95\% CIs ({REPS:,} resamples; Agarwal et al., 2021).}}",
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
