"""Write the project's own rows of results/: every shipped level and built-in policy by the
solitaire protocol, the levels by the 2-player protocol against the standard opponents, our
training runs (by the numpy export of their graded checkpoint where results/weights/ keeps
it, else reported as graded then), and the published numbers (reported, not re-run), then
rewrite the tables generated from them.

    python experiments/results_rows.py                   # all of it (about 5 minutes on 2 cores)
    python experiments/results_rows.py --only hard,random --no-versus
    python experiments/results_rows.py --ship runs/ppo-strict-lam09-ent06-s0   # one more seed

``--ship RUN`` keeps a finished run's weights: the checkpoint its recipe grades (of the two
it kept, the lower regret on its own evaluation games: `graded_checkpoint`) exported as a
numpy policy to ``results/weights/NAME/`` (its manifest's ``knew`` saying the solver chose the
checkpoint), graded from there into ``results/NAME.json``, whose ``model.path`` points at it
so that ``yahtzee verify results/NAME.json`` replays it.

A row is what ``yahtzee benchmark NAME --description ... --json results/NAME.json`` writes;
this script only fixes the descriptions. Run it from a clean checkout (the rows record the
commit and whether tracked files were modified).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from shelf import DATA_DIR, ROOT

from yahtzee_env.analysis.leaderboard import ROW_FORMAT, ROW_VERSION, benchmark
from yahtzee_env.analysis.multiplayer import VERSUS_PROTOCOL, benchmark_versus
from yahtzee_env.analysis.results import check_row, load_rows, schema_text, update_text
from yahtzee_env.fileio import atomic_write
from yahtzee_env.policies.knowledge import (
    chosen_by_solver,
    knowledge,
    knowledge_of_training,
    track,
)

WEIGHTS = ROOT / "results" / "weights"
"""Our runs' graded networks, one folder each (``NAME/NAME.json`` + ``NAME.npz``)."""

SOLITAIRE = {
    "optimal": "optimal (the exact solver)",
    "master": "master (learned turn values + expectimax through the rules model, 40,000 "
    "games, seed 0)",
    "expert": "expert (the solver distilled into a 256×256×256 MLP)",
    "hard": "hard (PPO, `configs/ppo-long.yaml` with λ 0.9, 120 M env-steps, seed 0)",
    "duelist": "duelist (plays to win at 2 seats: the solver's moves and an exact win-probability "
    "search over the last turns; alone and at 3-4 seats it plays hard's network)",
    # alone, the duelist is hard's network: its solitaire row says so and states hard's facts
    "winner": "winner (plays to win at 2 seats: a network that reads both cards, the duelist "
    "distilled from expert's weights then PPO with the result as its only reward, "
    "`configs/winner.yaml`; alone and at 3-4 seats it plays expert's network)",
    "heuristic": "heuristic (built-in baseline)",
    "medium": "medium (PPO, a `configs/ppo.yaml` checkpoint at 1.26 M env-steps)",
    "easy": "easy (PPO, a `configs/ppo.yaml` checkpoint at 262,144 env-steps)",
    "greedy": "greedy (best immediate score)",
    "random": "random (uniform legal action)",
}
VERSUS = ("easy", "medium", "hard", "expert", "master", "duelist", "winner")
VERSUS_DEALS = {"winner": 20_000}
"""Levels graded on more deals than the ladder's: the winner on the protocol's 40,000 games
an opponent (issue 61), where its edge over hard is a fraction of a point."""
OUR_VERSUS = {
    # name: (the numpy export committed beside its grading on the data shelf, its description)
    "win": (
        f"{DATA_DIR}/win/anchor/model/win.json",
        "win (PPO at a 2-seat table from hard's weights, the result its only reward: "
        "`configs/win.yaml` with the KL anchor `ppo.anchor_kl=0.1`, 35.9 M env-steps; "
        "docs/win-level.md)",
    ),
}
"""Our own learned 2-seat models, by the standard 2-player protocol; the row's agent is the
model file's path (a reader replays it with `yahtzee verify ROW PATH`)."""
SAME_WEIGHTS = {"duelist": "hard", "winner": "expert"}
"""Levels whose weights file is another level's: their rows say ``same_weights_as``."""
SOLO_KNEW_OF = {"duelist": "hard", "winner": "expert"}
"""Levels that play alone as another level does: their solitaire row states that one's facts."""

_PPO_LONG = knowledge_of_training(
    observation_version=2, shaping="upper-bonus", canonical_holds=True, teacher="none"
)
_STRICT = knowledge_of_training(
    observation_version=1, shaping="none", canonical_holds=False, teacher="none"
)
_LAM09 = "`configs/ppo-long.yaml` with λ 0.9 (`ppo.gae_lambda=0.9`)"
_STRICT_40 = "`configs/ppo-strict.yaml` (the strict track: no aids)"
_STRICT_120 = (
    "`configs/ppo-strict.yaml` on `ppo-long.yaml`'s 120 M schedule (the strict track: no aids)"
)
_STRICT_LAM09 = (
    "`configs/ppo-strict.yaml` (the strict track: no aids) on the 120 M schedule with λ 0.9 "
    "(`ppo.gae_lambda=0.9`)"
)
_STRICT_LAM09_ENT06 = (
    "`configs/ppo-strict.yaml` (the strict track: no aids) on the 120 M schedule with λ 0.9 "
    "and the entropy coefficient doubled (`ppo.gae_lambda=0.9 ppo.ent_coef=0.06`)"
)
OUR_RUNS = {
    # name: (config, seed, the data/ folder of its run's data, the graded checkpoint's env-steps)
    "ppo-long-s0": ("`configs/ppo-long.yaml`", 0, "ppo_long", 118013952),
    "ppo-long-s1": ("`configs/ppo-long.yaml`", 1, "ppo_long", 118013952),
    "ppo-long-s2": ("`configs/ppo-long.yaml`", 2, "ppo_long", 120012800),
    "ppo-long-lam09-s0": (_LAM09, 0, "ppo_long", 120012800),
    "ppo-long-lam09-s1": (_LAM09, 1, "ppo_long", 120012800),
    "ppo-long-lam09-s2": (_LAM09, 2, "ppo_long", 120012800),
    "ppo-strict-s0": (_STRICT_40, 0, "ppo_strict", 40009728),
    "ppo-strict-s1": (_STRICT_40, 1, "ppo_strict", 40009728),
    "ppo-strict-s2": (_STRICT_40, 2, "ppo_strict", 40009728),
    "ppo-strict-long-s0": (_STRICT_120, 0, "ppo_strict", 118013952),
    "ppo-strict-long-s1": (_STRICT_120, 1, "ppo_strict", 120012800),
    "ppo-strict-lam09-s0": (_STRICT_LAM09, 0, "ppo_strict/lam09", 118013952),
    "ppo-strict-lam09-s1": (_STRICT_LAM09, 1, "ppo_strict/lam09", 118013952),
    "ppo-strict-lam09-s2": (_STRICT_LAM09, 2, "ppo_strict/lam09", 120012800),
    "ppo-strict-lam09-ent06-s1": (_STRICT_LAM09_ENT06, 1, "ppo_strict/lam09", 120012800),
    "ppo-strict-lam09-ent06-s2": (_STRICT_LAM09_ENT06, 2, "ppo_strict/lam09", 120012800),
}
"""Our own training runs: each row is read from the benchmark row that its run's folder on
the data shelf keeps (its value, games and what it knew), never typed here; a run whose weights
results/weights/ keeps is graded again from them (`shipped_row`). Every graded checkpoint was
the lower evaluation regret of the two its run kept (docs/learning.md): the rows say so."""
RECIPES = {
    "ppo-long": "`configs/ppo-long.yaml`",
    "ppo-long-lam09": _LAM09,
    "ppo-strict": _STRICT_40,
    "ppo-strict-long": _STRICT_120,
    "ppo-strict-lam09": _STRICT_LAM09,
    "ppo-strict-lam09-ent06": _STRICT_LAM09_ENT06,
    "ppo-jax": "`configs/ppo.yaml` with `train.engine=jax` (PPO in JAX, trained on CPU)",
}
"""A run's recipe by its name without ``-s<seed>``: a new seed's row (``--ship``) says it."""
SHIPPED_AS = {
    # run: (what its graded weights are or were, the numpy export's weights sha256 or None)
    "ppo-long-lam09-s0": ("= level hard (version 5)", "level"),
}  # ppo-long-s0 (hard's version 4, `git show 10768c4:yahtzee_env/policies/levels/hard.npz`)
# is in results/weights/


NOT_KEPT = "weights not kept"


def our_run(name: str, config: str, seed: int, folder: str, steps: int) -> tuple:
    """A REPORTED entry from ``data/FOLDER/NAME/benchmark-STEPS.json``, one of our runs."""
    path = f"{DATA_DIR}/{folder}/{name}/benchmark-{steps}.json"
    row = json.loads((ROOT / path).read_text(encoding="utf-8"))
    shipped = SHIPPED_AS.get(name, (NOT_KEPT, None))[0]
    description = f"PPO, {config}, seed {seed} ({round(steps / 1e6)} M env-steps; {shipped})"
    knew = row["knew"] if row.get("knew_from") == "the agent" else _KNEW[config]
    knew = chosen_by_solver(knew)
    source = f"our run, graded by {row['version']} ({path})"
    return description, knew, "the agent", (row["expected_score"], "expected score",
                                            row["games"], source)  # fmt: skip


_KNEW = {c: _PPO_LONG for c in ("`configs/ppo-long.yaml`", _LAM09)} | {
    _STRICT_40: _STRICT,
    _STRICT_120: _STRICT,
    _STRICT_LAM09: _STRICT,
}  # rows graded before a run's checkpoint said what it knew: its config's facts
REPORTED = {
    **{name: our_run(name, *entry) for name, entry in OUR_RUNS.items()},
    "glenn-heuristic": (
        "Glenn's best hand-made heuristic",
        knowledge(reward="none (hand-made heuristic)", teacher="none"),
        "its paper",
        (244.87, "mean", None,
         "J. Glenn's heuristic strategies for solitaire Yahtzee, as the docs quoted it"),
    ),
    "a2c-arxiv-2601.00007": (
        "A2C (arXiv:2601.00007, Pape 2025)",
        knowledge(
            observation="not stated (the paper ablates feature encodings)",
            actions="not stated (the paper ablates action encodings)",
            model="none (policy-gradient methods: REINFORCE, A2C, PPO)",
        ),
        "its paper",
        (241.78, "median", 100_000, "arXiv:2601.00007, abstract"),
    ),
    "yahtzotron": (
        "Yahtzotron (A2C)",
        knowledge(
            observation="raw state (roll number, die counts, both scorecards and scores: "
            "its model.py)",
            model="exact rules model (a precomputed table of each keep's expected points "
            "per box: its strategy.py)",
            teacher="none (A2C through self-play: its README)",
        ),
        "its paper",
        (240.0, "mean", None, "its README: 'around 240' (dionhaefner/yahtzotron)"),
    ),
}  # fmt: skip


def reported_row(agent: str, description: str, knew, knew_from: str, reported) -> dict:
    value, statistic, games, source = reported
    extra = {}
    shipped = SHIPPED_AS.get(agent, (None, None))[1]
    if shipped == "level":  # its weights are a shipped level's: the row names them
        from yahtzee_env.policies.models import level_manifest

        level = "hard"
        extra = {
            "model": {"kind": "level", "name": level,
                      "sha256": level_manifest(level).weights_sha256},
            "same_weights_as": level,
        }  # fmt: skip
    elif shipped:
        extra = {"model": {"kind": "model file", "name": f"{agent} (numpy export)",
                           "sha256": shipped}}  # fmt: skip
    return check_row(
        {
            "row_format": ROW_FORMAT,
            "row_version": ROW_VERSION,
            "kind": "reported",
            "agent": agent,
            "description": description,
            "knew": knew,
            "knew_from": knew_from,
            "track": track(knew),
            "rules": "official",
            "reported": {"value": value, "statistic": statistic, "games": games, "source": source},
            **extra,
        }
    )


def shipped() -> list[str]:
    """The runs whose graded network results/weights/ keeps, by name."""
    return sorted(p.name for p in WEIGHTS.glob("*") if (p / f"{p.name}.json").is_file())


def recipe_of(name: str) -> tuple[str, int]:
    """(the recipe's description, the seed) of a run named ``RECIPE-s<seed>``."""
    found = re.fullmatch(r"(?P<recipe>.+)-s(?P<seed>\d+)", name)
    if found is None or found["recipe"] not in RECIPES:
        raise SystemExit(f"{name}: not RECIPE-s<seed> of a known recipe ({', '.join(RECIPES)})")
    return RECIPES[found["recipe"]], int(found["seed"])


def shipped_row(name: str, workers: int = 1) -> dict:
    """The solitaire row of a run's network kept in results/weights/NAME/, graded from there;
    its ``model.path`` points at it (relative to results/) for ``yahtzee verify``."""
    from yahtzee_env.policies.models import read_manifest

    manifest = WEIGHTS / name / f"{name}.json"
    steps = read_manifest(manifest).env_steps
    config, seed = recipe_of(name)
    row = benchmark(str(manifest), name=name, workers=workers)
    row["model"]["path"] = manifest.relative_to(ROOT / "results").as_posix()
    row["description"] = (
        f"PPO, {config}, seed {seed} ({round(steps / 1e6)} M env-steps; its weights in "
        f"results/weights/{name}/)"
    )
    row["source"] = (
        f"`yahtzee verify results/{name}.json` (the numpy export of its checkpoint at "
        f"{steps:,} env-steps)"
    )
    return check_row(row)


def graded_checkpoint(run: Path) -> int:
    """The env-steps of the checkpoint our recipes grade: of the two a run keeps at its end,
    the one with the lower regret on the run's own evaluation games (`evals.jsonl`)."""
    kept = sorted(
        {  # an SB3 run's ckpt_N.zip, a JAX run's ckpt_N.npz beside its ckpt_N.json
            int(p.name.split("_")[1].split(".")[0])
            for p in (run / "checkpoints").glob("ckpt_*")
            if not p.name.endswith(".state.npz")
        }
    )[-2:]
    evals = [json.loads(x) for x in (run / "evals.jsonl").read_text().splitlines() if x.strip()]
    regret = {e["timesteps"]: e["regret_per_game"] for e in evals if "regret_per_game" in e}
    missing = [steps for steps in kept if steps not in regret]
    if not kept or missing:
        raise SystemExit(f"{run}: no evaluation regret at checkpoint(s) {missing or 'none'}")
    return min(kept, key=lambda steps: (regret[steps], -steps))


def ship(run: Path, steps: int | None, workers: int) -> None:
    """Keep ``run``'s graded network in results/weights/ and write its row (`shipped_row`)."""
    from yahtzee_env.commands.cli import main as yahtzee

    name = run.resolve().name
    recipe_of(name)  # a known recipe, before anything is written
    steps = graded_checkpoint(run) if steps is None else steps
    folder = WEIGHTS / name
    code = yahtzee(["export", str(run), "--model", str(steps), "--out", str(folder),
                    "--name", name])  # fmt: skip
    if code:
        raise SystemExit(code)
    manifest = folder / f"{name}.json"
    raw = json.loads(manifest.read_text(encoding="utf-8"))
    raw["knew"] = chosen_by_solver(raw["knew"])
    atomic_write(manifest, json.dumps(raw, indent=2) + "\n")
    row = shipped_row(name, workers)
    write(ROOT / "results" / f"{name}.json", row)
    for graded in ROOT.glob(f"{DATA_DIR}/**/{name}/benchmark-{steps}.json"):  # the zip's own grade
        same = json.loads(graded.read_text(encoding="utf-8"))["chunks"] == row["chunks"]
        print(f"{graded.relative_to(ROOT)}: the export's games are "
              f"{'the same, chunk for chunk' if same else 'NOT the same'}")  # fmt: skip


def solitaire_row(name: str, row: dict) -> dict:
    """A level's or baseline's benchmark row with its description, and, for a level that
    plays alone as another does, that one's facts and ``same_weights_as``."""
    from yahtzee_env.policies.knowledge import knowledge_of
    from yahtzee_env.policies.models import load_opponent

    row["description"] = SOLITAIRE[name]
    if name in SOLO_KNEW_OF:
        row["knew"] = knowledge_of(load_opponent(SOLO_KNEW_OF[name]))
        row["track"] = track(row["knew"])
        row["description"] = (
            f"{name} alone (= {SOLO_KNEW_OF[name]}: alone it plays {SOLO_KNEW_OF[name]}'s "
            "network; at 2 seats it plays to win: its head-to-head row)"
        )
    if name in SAME_WEIGHTS:
        row["same_weights_as"] = SAME_WEIGHTS[name]
    return check_row(row)


def versus_row(name: str, row: dict) -> dict:
    row["description"] = SOLITAIRE[name]
    if name in SAME_WEIGHTS:
        row["same_weights_as"] = SAME_WEIGHTS[name]
    return check_row(row)


def write(path: Path, row: dict) -> None:
    atomic_write(path, json.dumps(row, indent=2) + "\n")
    print(f"wrote {path.relative_to(ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=None, help="comma-separated names (default all)")
    parser.add_argument("--no-versus", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--ship",
        type=Path,
        default=None,
        metavar="RUN",
        help="keep RUN's graded network in results/weights/ and write its row",
    )
    parser.add_argument(
        "--steps",
        type=int,
        default=None,
        help="with --ship: this checkpoint instead of the recipe's rule",
    )
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    out = ROOT / "results"
    out.mkdir(exist_ok=True)
    if args.ship is not None:
        ship(args.ship, args.steps, args.workers)
        only = set()  # the tables only
    for name in SOLITAIRE:
        if only is None or name in only:
            row = benchmark(name, workers=args.workers)
            write(out / f"{name}.json", solitaire_row(name, row))
    kept = shipped()
    for name in kept:
        if only is None or name in only:
            write(out / f"{name}.json", shipped_row(name, args.workers))
    for name, (description, knew, knew_from, reported) in REPORTED.items():
        if (only is None or name in only) and name not in kept:
            write(out / f"{name}.json", reported_row(name, description, knew, knew_from, reported))
    if not args.no_versus and args.ship is None:
        for name in VERSUS:
            if only is None or name in only:
                deals = VERSUS_DEALS.get(name, VERSUS_PROTOCOL.deals)
                row = benchmark_versus(
                    name, players=2, vs=VERSUS_PROTOCOL.standard_opponents, deals=deals
                )
                write(out / f"versus-2p-{name}.json", versus_row(name, row))
        for name, (model, description) in OUR_VERSUS.items():
            if only is None or name in only:
                row = benchmark_versus(str(ROOT / model), players=2, name=model)
                write(
                    out / f"versus-2p-{name}.json", check_row({**row, "description": description})
                )
    rows = load_rows(out)
    atomic_write(out / "schema.json", schema_text())
    for doc in (ROOT / "README.md", ROOT / "docs" / "benchmark.md"):
        atomic_write(doc, update_text(doc.read_text(encoding="utf-8"), rows))
        print(f"updated {doc.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
