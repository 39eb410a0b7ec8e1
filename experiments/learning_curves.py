"""Learning curves of reward-only PPO: a table at fixed env-step marks and a plot.

    # from run folders (TensorBoard logs) to the committed data:
    python experiments/learning_curves.py --runs runs/ppo-s0 runs/ppo-s1 runs/ppo-s2 \
        --csv data/learning/learning_curves.csv
    # a run resumed in a later sitting (its earlier logs gone): join its new rows on
    python experiments/learning_curves.py --runs runs/ppo-long-s1 --continue \
        --csv data/learning/learning_curves_in_progress.csv
    # from the committed data to the table and plot of docs/learning.md:
    python experiments/learning_curves.py --csv data/learning/learning_curves.csv \
        --plot docs/img/learning_curves.png

Runs named ``<recipe>-s<seed>`` are grouped by recipe; the table gives, at each mark that
every seed reached, the mean over seeds of the evaluation mean, its range, the regret per game
and the upper-bonus rate, with env-steps, games and wall time on the axes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from yahtzee_agents import curves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="*", default=[], help="run folders to collect")
    parser.add_argument(
        "--csv",
        nargs="+",
        required=True,
        help="data file(s): one is written from --runs; else all are read, one after another",
    )
    parser.add_argument(
        "--continue",
        dest="continue_runs",
        action="store_true",
        help="with --runs: the runs are resumed sittings of runs already in the --csv file; "
        "their new rows are joined onto those (wall time and games continued), the file's "
        "other rows are kept",
    )
    parser.add_argument("--plot", help="write the plot here (PNG)")
    parser.add_argument(
        "--marks", default="1,2,5,10,20,30,40,60,80,100", help="env-step marks, in millions"
    )
    parser.add_argument("--log-x", action="store_true", help="env-steps on a log scale")
    parser.add_argument(
        "--any-run",
        action="store_true",
        help="rows at every mark that any seed reached (default: that every seed reached); "
        "the runs column says how many seeds each row averages",
    )
    parser.add_argument(
        "--reach",
        help="expected scores, e.g. 250,253: when each run first reached them (expected = the "
        "optimum of the run's rules - regret per game of its evaluation; the rules are read "
        "from each --runs folder, and from the run's name for rows read only from --csv: "
        "ppo-upper-first-s0 is upper-first's, a name with no preset in it official's)",
    )
    parser.add_argument(
        "--optimum",
        type=float,
        default=None,
        help="one optimum for every run read only from --csv (default: each run's rules')",
    )
    args = parser.parse_args()
    if args.continue_runs and not args.runs:
        parser.error("--continue joins the --runs given onto the --csv file: give --runs")
    try:
        if args.runs:
            if len(args.csv) != 1:
                raise ValueError("--runs writes one --csv file")
            if args.continue_runs:
                rows = curves.continue_runs(curves.read_csv(args.csv[0]), args.runs)
            else:
                rows = [row for run in args.runs for row in curves.collect(run)]
            curves.write_csv(rows, args.csv[0])
        rows = [row for path in args.csv for row in curves.read_csv(path)]
        marks = [int(float(m) * 1e6) for m in args.marks.split(",")]
    except (OSError, ValueError, KeyError) as err:
        parser.exit(2, f"learning_curves: error: {err}\n")
    by_recipe: dict[str, list[dict]] = {}
    for row in rows:
        by_recipe.setdefault(curves.recipe_of(str(row["run"])), []).append(row)
    for recipe, recipe_rows in sorted(by_recipe.items()):
        summary = curves.summarize(recipe_rows, marks, every_run=not args.any_run)
        print(curves.markdown_table(summary, recipe))
        print()
    if args.reach:
        targets = [float(t) for t in args.reach.split(",")]
        optimum = {}
        for run in {str(row["run"]) for row in rows}:
            rules = curves.rules_in_name(run)
            optimum[run] = args.optimum or curves.rules_optimum(rules)
        for run_dir in args.runs or []:  # a run folder says its rules
            optimum[Path(run_dir).name] = curves.run_optimum(run_dir)
        for run, hits in curves.first_reaching(rows, optimum, targets).items():
            said = [
                f"{t:g}: "
                + (
                    f"{r['games']:,} games, {r['steps'] / 1e6:.2f} M env-steps, "
                    f"{r['wall_seconds'] / 60:.1f} min"
                    if r
                    else "not reached"
                )
                for t, r in hits.items()
            ]
            print(f"{run}: " + "; ".join(said))
    if args.plot:
        curves.plot(rows, args.plot, log_steps=args.log_x)


if __name__ == "__main__":
    main()
