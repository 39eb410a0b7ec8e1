"""The learning-curve tables (`yahtzee_agents.curves`): the marks, the seeds they average,
and the runs of one recipe."""

from __future__ import annotations

import pytest

from yahtzee_agents import curves


def row(run: str, steps: int, mean: float, regret: float = 5.0) -> dict:
    return {
        "run": run,
        "seed": 0,
        "steps": steps,
        "games": steps // 37,
        "wall_seconds": steps / 1e4,
        "mean": mean,
        "ci95": 1.8,
        "regret": regret,
        "upper_bonus_rate": 0.6,
        "yahtzee_rate": 0.33,
    }


ROWS = [
    row("ppo-long", 9_900_000, 230.0),
    row("ppo-long", 20_100_000, 240.0),  # within 2% of 20 M: counts for it
    row("ppo-long", 120_000_000, 249.0),
    row("ppo-long-s1", 10_000_000, 234.0),
    row("ppo-long-s1", 19_000_000, 238.0),  # below 20 M, within 10%: its 20 M row
]


def test_a_recipe_is_its_runs_without_the_seed():
    assert curves.recipe_of("ppo-long-s1") == curves.recipe_of("ppo-long") == "ppo-long"
    assert curves.recipe_of("ppo-s12") == "ppo"
    assert curves.recipe_of("model-based") == "model-based"


def test_marks_every_seed_reached_by_default():
    marks = [10_000_000, 20_000_000, 120_000_000]
    summary = curves.summarize(ROWS, marks)
    assert [s["steps"] for s in summary] == marks[:2]
    assert [s["runs"] for s in summary] == [2, 2]
    assert summary[0]["mean"] == pytest.approx(232.0)
    assert (summary[1]["mean_min"], summary[1]["mean_max"]) == (238.0, 240.0)


def test_any_run_keeps_the_marks_one_seed_reached_and_says_so():
    marks = [10_000_000, 20_000_000, 120_000_000]
    summary = curves.summarize(ROWS, marks, every_run=False)
    assert [(s["steps"], s["runs"]) for s in summary] == [
        (10_000_000, 2),
        (20_000_000, 2),
        (120_000_000, 1),
    ]
    assert summary[2]["mean"] == 249.0
    table = curves.markdown_table(summary, "ppo-long")
    assert "| ppo-long | 120 M |" in table and "| 1 | 249.0 ± 1.8 |" in table


def write_run(run_dir, evals: dict[int, dict[str, float]], fps: list[tuple[int, float]]):
    """A run folder as `yahtzee train` leaves it: its config and TensorBoard scalars (wall
    times 1,000 s + step / 10,000)."""
    tensorboard = pytest.importorskip("torch.utils.tensorboard")
    (run_dir / "tb").mkdir(parents=True)
    (run_dir / "config.yaml").write_text("train: {seed: 3}\n")
    writer = tensorboard.SummaryWriter(str(run_dir / "tb"))
    for step, value in fps:
        writer.add_scalar("time/fps", value, step, walltime=1000 + step / 1e4)
        writer.add_scalar("rollout/ep_len_mean", 37.0, step, walltime=1000 + step / 1e4)
    for step, scalars in evals.items():
        writer.add_scalar("rollout/ep_len_mean", 37.0, step, walltime=1000 + step / 1e4)
        for key, value in scalars.items():
            writer.add_scalar(curves.TAGS[key], value, step, walltime=1000 + step / 1e4)
    writer.close()


def test_an_evaluation_without_regret_does_not_shift_the_others(tmp_path):
    # the second evaluation logged no regret (no solver table then): each row keeps its own
    base = {"mean": 240.0, "ci95": 1.8, "upper_bonus_rate": 0.5, "yahtzee_rate": 0.3}
    evals = {
        1_000_000: base | {"regret": 9.0},
        2_000_000: dict(base),
        3_000_000: base | {"regret": 7.0},
    }
    write_run(tmp_path / "r-s3", evals, [(16_384, 16_384.0), (32_768, 10_000.0)])
    rows = curves.collect(tmp_path / "r-s3")
    assert [r["steps"] for r in rows] == list(evals)
    assert rows[0]["regret"] == pytest.approx(9.0)
    assert rows[1]["regret"] != rows[1]["regret"]  # nan
    assert rows[2]["regret"] == pytest.approx(7.0)
    # a new run: the first rollout (16,384 steps at 16,384 steps/s) took 1 s before its log
    assert rows[0]["wall_seconds"] == pytest.approx(1_000_000 / 1e4 - 16_384 / 1e4 + 1, abs=0.2)


def test_a_resumed_sitting_continues_the_committed_rows(tmp_path):
    # the first sitting's rows are committed; it stopped at 2.5 M after 300 s of training
    earlier = [row("ppo-long-s3", s, 240.0) | {"wall_seconds": s / 1e4 + 50} for s in (1e6, 2e6)]
    earlier += [row("ppo-long-s3", 3_000_000, 241.0)]  # not in the resumed run's logs: replaced
    run = tmp_path / "ppo-long-s3"
    base = {"mean": 245.0, "ci95": 1.8, "regret": 6.0, "upper_bonus_rate": 0.5, "yahtzee_rate": 0.3}
    # resumed at 2.5 M: its first rollout of 16,384 steps took 2 s (8,192 steps/s)
    write_run(run, {3_000_000: base, 4_000_000: base}, [(2_516_384, 8_192.0), (2_532_768, 9e3)])
    (run / "sessions.jsonl").write_text(
        '{"wall_seconds": 300.0, "ppo_seconds": 299.0, "end_timesteps": 2500000}\n'
    )
    other = row("ppo-long", 1_000_000, 230.0)
    rows = curves.continue_runs([other, *earlier], [run])
    assert rows[0] == other
    mine = [r for r in rows if r["run"] == "ppo-long-s3"]
    assert [r["steps"] for r in mine] == [1_000_000, 2_000_000, 3_000_000, 4_000_000]
    assert mine[2]["mean"] == 245.0
    # wall time: the first sitting's 300 s, then the time from the second sitting's start
    # (2 s before its first log, at 2,516,384) to the evaluation
    started = 1000 + 2_516_384 / 1e4 - 2
    assert mine[2]["wall_seconds"] == pytest.approx(300 + 1000 + 3e6 / 1e4 - started, abs=0.2)
    assert mine[3]["wall_seconds"] - mine[2]["wall_seconds"] == pytest.approx(100, abs=0.2)
    # games continue from the last committed row (37 steps a game)
    assert mine[2]["games"] - mine[1]["games"] == pytest.approx(1e6 / 37, rel=1e-3)


def test_reach_counts_each_run_against_the_optimum_of_its_own_rules(tmp_path):
    """Issue 28: `--reach` used the official optimum for every run, so an upper-first run
    (optimum about 245.9) "reached 246" with a regret of 8."""
    rows = [
        {"run": "official-s0", "steps": 1, "regret": 8.0},
        {"run": "upper-first-s0", "steps": 1, "regret": 8.0},
    ]
    optimum = {"official-s0": 254.5877, "upper-first-s0": 245.0}
    hits = curves.first_reaching(rows, optimum, [246.0])
    assert hits["official-s0"][246.0] is not None
    assert hits["upper-first-s0"][246.0] is None
    run = tmp_path / "upper-first-s0"
    run.mkdir()
    (run / "config.yaml").write_text("name: upper-first-s0\nenv:\n  rules: upper-first\n")
    assert curves.run_rules(run) == "upper-first"


def test_a_run_without_its_logs_is_read_from_its_evaluations(tmp_path):
    """A run continued across sittings whose TensorBoard logs were not kept (the committed
    folders in data/) gives the same rows from ``evals.jsonl``: wall time from its sittings,
    linear within each, games unknown; the table prints "—" for what is unknown."""
    import json

    run = tmp_path / "strict-s2"
    run.mkdir()
    (run / "config.yaml").write_text("train: {seed: 2}\n")
    evals = [(1_000_000, 190.0, 60.0), (3_000_000, 220.0, 30.0), (4_000_000, 230.0, 20.0)]
    (run / "evals.jsonl").write_text(
        "".join(
            json.dumps(
                {"timesteps": s, "games": 4000, "mean": m, "ci95": 1.0, "regret_per_game": r,
                 "upper_bonus_rate": 0.4, "yahtzee_rate": 0.2}
            ) + "\n"
            for s, m, r in evals
        )
    )  # fmt: skip
    sittings = [{"wall_seconds": 200.0, "end_timesteps": 2_000_000},
                {"wall_seconds": 100.0, "end_timesteps": 4_000_000}]  # fmt: skip
    (run / "sessions.jsonl").write_text("".join(json.dumps(s) + "\n" for s in sittings))
    rows = curves.collect(run)
    assert [r["steps"] for r in rows] == [s for s, _, _ in evals]
    assert [r["mean"] for r in rows] == [m for _, m, _ in evals]
    assert [r["regret"] for r in rows] == [r for _, _, r in evals]
    assert all(r["seed"] == 2 and r["games"] != r["games"] for r in rows)  # games: nan
    assert [r["wall_seconds"] for r in rows] == pytest.approx([100.0, 250.0, 300.0])
    curves.write_csv(rows, tmp_path / "c.csv")
    back = curves.read_csv(tmp_path / "c.csv")
    assert [r["wall_seconds"] for r in back] == pytest.approx([100.0, 250.0, 300.0])
    table = curves.markdown_table(curves.summarize(back, [1_000_000, 4_000_000]), "strict")
    assert "| strict | 1 M | — | 2 min | 1 | 190.0 ± 1.0 |" in table
    assert "| strict | 4 M | — | 5 min | 1 | 230.0 ± 1.0 |" in table


def test_reach_on_csv_rows_takes_the_rules_the_run_name_says():
    """Rows read only from a CSV (no config beside them) are counted against the optimum of
    the preset their run's name says: `ppo-upper-first-s0` is upper-first's (213.69), so it
    does not "reach 246"; a name with no preset is official's."""
    assert curves.rules_in_name("ppo-upper-first-s0") == "upper-first"
    assert curves.rules_in_name("ppo-no-joker-no-bonus-s1") == "no-joker-no-bonus"
    assert curves.rules_in_name("ppo-no-joker-s0") == "no-joker"
    assert curves.rules_in_name("ppo-long-s1") == "official"
    assert curves.rules_optimum("upper-first") == pytest.approx(213.69, abs=0.01)
