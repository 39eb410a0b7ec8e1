"""``yahtzee verify ROW.json [MODEL]``: re-run a submitted row's protocol with its model and say
whether the row holds.

    from yahtzee_env.analysis.verify import model_of_row, verify_row
    report = verify_row(row, "hard")       # a `Verdict`: .holds, .how, .lines
    verify_row(row, model_of_row(row, "results/hard.json"))   # the model the row names

Without MODEL the row's own is used (`model_of_row`): a level, a built-in, a function, or the
model file at the row's ``model.path``, relative to the row (results/weights/ holds the
exported networks of our runs' rows).

A row holds **exactly** when its agent is reproducible (deterministic, or seeded by the
protocol) and this machine has the row's dice and solver digests: then every chunk's score
sum must be the same integer and its regret sum the same float (to 1e-9 relative), and so
every number of the row. Otherwise it holds **within its CI** when the re-run's expected
score and mean differ from the row's by less than the 95% CI of a difference of two
independent estimates (sqrt(ci_row² + ci_rerun²)).

Before anything is played, the row is checked against the schema (`yahtzee_env.analysis.results`),
its protocol must be this package's, its numbers must agree with its own chunks, and MODEL
must be the model that made it (its sha256, or its name for a built-in): each refusal is a
`RowError` naming the field. A row whose model names the code that plays it around its
weights (``model.code_sha256``, the duelist's search) is refused by its digests alone when
that code differs here; a replay says so and lets the games decide. A versus row that does not
replay names each field that differs (wins, draws, losses, win rate, margin, points) and those
that are the same.

`verify_digests` (``yahtzee verify --digests``) does all of that and no replay, for rows too
long to re-play often (the duelist's 40,000 games): the model's digest, the dice digest of
the row's protocol recomputed on this machine (and the solver table's), and the row's own
arithmetic (a versus row's counts and points against its games and win rate).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yahtzee_env.analysis.results import RowError, check_row

REL = 1e-9  # relative tolerance of a float sum replayed on the same dice


@dataclass
class Verdict:
    holds: bool
    how: str  # "exactly", "within its CI", "no"
    lines: list[str] = field(default_factory=list)


def _close(a: float, b: float, rel: float = REL) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)


def check_consistent(row: dict[str, Any]) -> None:
    """`RowError` unless the row's games, mean and expected score are those of its chunks."""
    chunks = row["chunks"]
    games = sum(c["games"] for c in chunks)
    if games != row["games"]:
        raise RowError(f"games: {row['games']} but its chunks hold {games} games")
    mean = sum(c["score_sum"] for c in chunks) / games
    if not _close(mean, row["mean"]):
        raise RowError(f"mean: {row['mean']!r} is not its chunks' mean score ({mean!r})")
    regret = sum(c["regret_sum"] for c in chunks) / games
    if not _close(regret, row["regret_per_game"], 1e-7):
        raise RowError(
            f"regret_per_game: {row['regret_per_game']!r} is not its chunks' ({regret!r})"
        )
    expected = row["optimum"] - regret
    if not _close(expected, row["expected_score"], 1e-7):
        raise RowError(
            f"expected_score: {row['expected_score']!r} is not optimum - regret of its chunks "
            f"({expected!r})"
        )


def model_of_row(row: dict[str, Any], row_path: str | os.PathLike | None = None) -> str:
    """The MODEL a row names, for ``yahtzee verify ROW.json`` without one: a level's or a
    built-in's name, a function's ``module:function``, or the model file at the row's
    ``model.path`` (relative to the row's folder). `RowError` where the row names none."""
    named = row.get("model")
    if row["kind"] == "reported" and named is None:
        raise RowError("kind: a 'reported' row is a published number with no model to re-run")
    if named["kind"] in ("level", "built-in", "function"):
        return named["name"]
    if named["kind"] == "model file" and "path" in named:
        folder = Path(row_path).parent if row_path is not None else Path(".")
        found = folder / named["path"]
        if not found.is_file():
            raise RowError(
                f"model.path: {named['path']!r} is not beside the row ({found} is missing: the "
                "weights ship with the repository's results/, not with the wheel)"
            )
        return str(found)
    raise RowError(
        f"model: the row names {named['kind']} {named['name']!r} and no path to it: give MODEL"
    )


def check_model(row: dict[str, Any], model: str, agent: Any, replay: bool = True) -> str | None:
    """`RowError` if ``model`` is not the model the row names; a note when the row names no
    digest to compare (a Python object). A row whose model names the code that plays it
    (``code_sha256``: a search around the weights) must find the same code, unless the games
    are replayed (``replay``): then a note says it differs and the replay decides."""
    from yahtzee_env.analysis.leaderboard import model_identity

    named = row["model"]
    found = model_identity(model, agent)
    if named["kind"] == "python object":
        return (
            f"the row's model is a Python object ({named['name']!r}): nothing to compare "
            f"{model!r} with"
        )
    if named["sha256"] is None:
        if found["kind"] != named["kind"] or found["name"] != named["name"]:
            raise RowError(
                f"model.name: the row was made by {named['kind']} {named['name']!r}, not "
                f"{found['kind']} {found['name']!r}"
            )
        return None
    if found["sha256"] != named["sha256"]:
        raise RowError(
            f"model.sha256: the row was made by {named['name']!r} with sha256 "
            f"{named['sha256'][:16]}..., {model!r} has "
            f"{(found['sha256'] or 'none')[:16]}..."
        )
    if found.get("table_sha256") != named.get("table_sha256"):  # a level's 2-seat network
        raise RowError(
            f"model.table_sha256: the row was made by {named['name']!r} whose table network "
            f"has sha256 {(named.get('table_sha256') or 'none')[:16]}..., {model!r}'s has "
            f"{(found.get('table_sha256') or 'none')[:16]}..."
        )
    if "code_sha256" in named and found.get("code_sha256") != named["code_sha256"]:
        code = ", ".join(named.get("code", [])) or "its code"
        what = (
            f"model.code_sha256: the row was played by {code} with sha256 "
            f"{named['code_sha256'][:16]}..., this install's is "
            f"{(found.get('code_sha256') or 'none')[:16]}..."
        )
        if not replay:
            raise RowError(what + " (replay it to check its games)")
        return what + ": replayed with this install's"
    return None


def verify_row(row: dict[str, Any], model: str, *, workers: int | None = 1) -> Verdict:
    """Re-run ``row``'s protocol with ``model`` (a POLICY, as `yahtzee benchmark` takes) and
    compare (see the module docstring). `RowError` for a row that cannot be verified."""
    check_row(row)
    if row["kind"] == "reported":
        raise RowError("kind: a 'reported' row is a published number with no model to re-run")
    if row["kind"] == "versus":
        return _verify_versus(row, model)
    from yahtzee_env.analysis.leaderboard import PROTOCOL, benchmark, load_agent

    if row["protocol"] != PROTOCOL.name:
        raise RowError(f"protocol: {row['protocol']!r} is not this package's {PROTOCOL.name!r}")
    if row["seed"] != PROTOCOL.seed:
        raise RowError(f"seed: the protocol's games start from seed {PROTOCOL.seed}")
    check_consistent(row)
    agent = load_agent(model, row["rules"], row["agent"])
    note = check_model(row, model, agent)
    new = benchmark(agent, rules=row["rules"], games=row["games"], workers=workers,
                    knew=row["knew"], source=model)  # fmt: skip
    verdict = Verdict(False, "no", [note] if note else [])
    same_dice = new["provenance"]["dice_sha256"] == row["provenance"]["dice_sha256"]
    same_solver = new["provenance"]["solver_sha256"] == row["provenance"]["solver_sha256"]
    if new["reproducible"] != row["reproducible"]:
        verdict.lines.append(
            f"reproducible: the row says {row['reproducible']!r}, the re-run found "
            f"{new['reproducible']!r}"
        )
    exact = row["reproducible"] != "no" and new["reproducible"] != "no"
    if exact and same_dice and same_solver:
        bad = [
            i
            for i, (a, b) in enumerate(zip(row["chunks"], new["chunks"], strict=True))
            if a["score_sum"] != b["score_sum"] or not _close(a["regret_sum"], b["regret_sum"])
        ]
        if not bad:
            verdict.holds, verdict.how = True, "exactly"
            verdict.lines.append(
                f"holds exactly: {row['games']:,} games replayed on the same dice "
                f"(sha256 {row['provenance']['dice_sha256'][:12]}...), every chunk's score "
                f"and regret the same; mean {new['mean']:.4f}, expected score "
                f"{new['expected_score']:.4f}"
            )
            return verdict
        i = bad[0]
        verdict.lines.append(
            f"does not hold: chunk {i} ({row['chunks'][i]['games']} games) scored "
            f"{row['chunks'][i]['score_sum']} in the row and {new['chunks'][i]['score_sum']} "
            f"re-run on the same dice ({len(bad)} chunk(s) differ); mean {row['mean']:.4f} "
            f"in the row, {new['mean']:.4f} re-run"
        )
        return verdict
    if not same_dice:
        verdict.lines.append("the dice differ from the row's (another numpy or bit generator)")
    if not same_solver:
        verdict.lines.append("the solver table differs from the row's")
    fails = []
    for key, ci in (("expected_score", "expected_ci95"), ("mean", "ci95")):
        allowed = math.hypot(row[ci], new[ci])
        delta = new[key] - row[key]
        if not abs(delta) <= allowed:
            fails.append(f"{key} {row[key]:.3f} in the row, {new[key]:.3f} re-run "
                         f"(difference {delta:+.3f}, allowed ±{allowed:.3f})")  # fmt: skip
    if fails:
        verdict.lines.append("does not hold: " + "; ".join(fails))
        return verdict
    verdict.holds, verdict.how = True, "within its CI"
    verdict.lines.append(
        f"holds within its CI: expected score {new['expected_score']:.3f} re-run against "
        f"{row['expected_score']:.3f} ± {row['expected_ci95']:.3f}; mean {new['mean']:.2f} "
        f"against {row['mean']:.2f} ± {row['ci95']:.2f}"
    )
    return verdict


def verify_digests(row: dict[str, Any], model: str) -> Verdict:
    """Everything `verify_row` checks but the replay: `RowError` for a row that is not the
    model's, not self-consistent, or made on other dice than this machine's protocol."""
    from yahtzee_env.analysis.leaderboard import PROTOCOL, load_agent

    check_row(row)
    if row["kind"] == "reported":
        raise RowError("kind: a 'reported' row is a published number with no model to re-run")
    agent = load_agent(model, row["rules"], row["agent"])
    note = check_model(row, model, agent, replay=False)
    lines = [note] if note else []
    if row["kind"] == "solitaire":
        from yahtzee_env.analysis.protocol import dice_digest, solver_digest
        from yahtzee_env.solver.exact import load_or_solve

        if row["protocol"] != PROTOCOL.name or row["seed"] != PROTOCOL.seed:
            raise RowError(
                f"protocol: {row['protocol']!r} seed {row['seed']} is not this package's"
            )
        check_consistent(row)
        dice = dice_digest(row["games"], PROTOCOL.seed, PROTOCOL.chunk_size)
        solver = solver_digest(load_or_solve(row["rules"]))
        if solver != row["provenance"]["solver_sha256"]:
            raise RowError("provenance.solver_sha256: not this machine's solver table")
        what = f"{row['games']:,} games"
    else:
        from yahtzee_env.analysis.multiplayer import VERSUS_PROTOCOL
        from yahtzee_env.analysis.protocol import versus_dice_digest

        if row["protocol"] != VERSUS_PROTOCOL.name:
            raise RowError(f"protocol: {row['protocol']!r} is not {VERSUS_PROTOCOL.name!r}")
        for i, o in enumerate(row["opponents"]):
            counts = [o.get(k) for k in ("wins", "draws", "losses")]
            if None not in counts and sum(counts) != row["deals"] * row["players"]:
                raise RowError(
                    f"opponents[{i}]: wins + draws + losses = {sum(counts)}, not deals x players"
                )
            if "points_sum" in o and not _close(o["points_sum"] / row["deals"], o["win_rate"]):
                raise RowError(f"opponents[{i}].win_rate: not its points_sum / deals")
        dice = versus_dice_digest(
            row["deals"], row["players"], row["seed"], VERSUS_PROTOCOL.batch_size,
            bool(row.get("duplicate", False)),
        )  # fmt: skip
        what = f"{row['deals']:,} deals"
    if dice != row["provenance"]["dice_sha256"]:
        raise RowError("provenance.dice_sha256: not this machine's dice for the row's protocol")
    lines.append(
        f"digests hold (not replayed): the model's sha256, the dice of {what} "
        f"(sha256 {dice[:12]}...) and the row's own arithmetic"
    )
    return Verdict(True, "by its digests", lines)


VERSUS_FIELDS = ("wins", "draws", "losses", "win_rate", "margin", "points_sum")
"""The fields of a versus row's opponent that a replay on the same dice must give again."""


def _versus_differences(row: dict[str, Any], rerun: dict[str, Any]) -> list[str]:
    """The `VERSUS_FIELDS` of one opponent that the row has and the re-run does not repeat
    (counts exactly, rates and means to `REL`)."""
    return [
        k
        for k in VERSUS_FIELDS
        if k in row
        and (row[k] != rerun.get(k) if isinstance(row[k], int) else not _close(row[k], rerun[k]))
    ]


def _verify_versus(row: dict[str, Any], model: str) -> Verdict:
    from yahtzee_env.analysis.leaderboard import load_agent
    from yahtzee_env.analysis.multiplayer import VERSUS_PROTOCOL, benchmark_versus

    if row["protocol"] != VERSUS_PROTOCOL.name:
        raise RowError(f"protocol: {row['protocol']!r} is not {VERSUS_PROTOCOL.name!r}")
    agent = load_agent(model, row["rules"], row["agent"])
    note = check_model(row, model, agent)
    new = benchmark_versus(
        agent, players=row["players"], vs=[o["opponent"] for o in row["opponents"]],
        deals=row["deals"], rules=row["rules"], knew=row["knew"], source=model,
        duplicate=bool(row.get("duplicate", False)), seed=row["seed"],
    )  # fmt: skip
    verdict = Verdict(True, "exactly", [note] if note else [])
    same_dice = new["provenance"]["dice_sha256"] == row["provenance"]["dice_sha256"]
    if not same_dice:
        verdict.lines.append("the dice differ from the row's (another numpy or bit generator)")
    exact = row["reproducible"] != "no" and new["reproducible"] != "no" and same_dice
    for a, b in zip(row["opponents"], new["opponents"], strict=True):
        differ = _versus_differences(a, b)
        if exact and not differ:
            continue
        allowed = math.hypot(a["win_ci95"], b["win_ci95"])
        if exact or abs(a["win_rate"] - b["win_rate"]) > allowed:
            verdict.holds, verdict.how = False, "no"
            same = [k for k in VERSUS_FIELDS if k in a and k not in differ]
            verdict.lines.append(
                f"does not hold: vs {a['opponent']}, "
                + "; ".join(f"{k} {a[k]!r} in the row, {b[k]!r} re-run" for k in differ)
                + (f" ({', '.join(same)} the same)" if same else "")
            )
        elif verdict.how == "exactly":
            verdict.how = "within its CI"
    if verdict.holds:
        verdict.lines.append(
            f"holds {verdict.how}: win rates re-run "
            + ", ".join(
                f"vs {b['opponent']} {100 * b['win_rate']:.2f}% (margin {b['margin']:+.4f})"
                for b in new["opponents"]
            )
            + (f"; {', '.join(VERSUS_FIELDS)} the same" if verdict.how == "exactly" else "")
        )
    return verdict
