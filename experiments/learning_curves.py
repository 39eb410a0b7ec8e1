"""Learning curves of reward-only PPO: a table at fixed env-step marks and a plot.

    # from run folders (TensorBoard logs) to the committed data:
    python experiments/learning_curves.py --runs runs/ppo-s0 runs/ppo-s1 runs/ppo-s2 \
        --csv docs/learning_curves.csv
    # from the committed data to the table and plot of docs/learning.md:
    python experiments/learning_curves.py --csv docs/learning_curves.csv \
        --plot docs/learning_curves.png

Runs named ``<recipe>-s<seed>`` are grouped by recipe; the table gives, at each mark that
every seed reached, the mean over seeds of the evaluation mean, its range, the regret per game
and the upper-bonus rate, with env-steps, games and wall time on the axes.
"""

from __future__ import annotations

import argparse

from yahtzee_agents import curves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="*", default=[], help="run folders to collect")
    parser.add_argument("--csv", required=True, help="data file: written from --runs, else read")
    parser.add_argument("--plot", help="write the plot here (PNG)")
    parser.add_argument(
        "--marks", default="1,2,5,10,20,30,40,60,80,100", help="env-step marks, in millions"
    )
    args = parser.parse_args()
    try:
        if args.runs:
            rows = [row for run in args.runs for row in curves.collect(run)]
            curves.write_csv(rows, args.csv)
        rows = curves.read_csv(args.csv)
        marks = [int(float(m) * 1e6) for m in args.marks.split(",")]
    except (OSError, ValueError, KeyError) as err:
        parser.exit(2, f"learning_curves: error: {err}\n")
    by_recipe: dict[str, list[dict]] = {}
    for row in rows:
        by_recipe.setdefault(curves.recipe_of(str(row["run"])), []).append(row)
    for recipe, recipe_rows in sorted(by_recipe.items()):
        print(curves.markdown_table(curves.summarize(recipe_rows, marks), recipe))
        print()
    if args.plot:
        curves.plot(rows, args.plot)


if __name__ == "__main__":
    main()
