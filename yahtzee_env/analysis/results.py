"""The results folder: benchmark rows as JSON files, their schema, and the leaderboard tables
written from them (the one writer of the README's and docs/benchmark.md's tables).

    from yahtzee_env.analysis.results import load_rows, check_row, leaderboard_table

    rows = load_rows("results")                 # every *.json row, checked
    print(leaderboard_table(rows, "readme"))

A row is one of three kinds (``kind``): ``solitaire`` (`yahtzee_env.benchmark`), ``versus``
(the multi-player protocol, `yahtzee_env.analysis.multiplayer`) and ``reported`` (a published
number, not re-run here; it states what its paper says the agent knew, or "not stated").
`SCHEMA` is their JSON Schema (draft 2020-12; ``results/schema.json`` is written from it) and
`check_row` checks a row against it with an error naming the field (``knew.reward: ...``),
without a schema library, so that `yahtzee verify` runs on a core install.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from yahtzee_env.policies.knowledge import FIELDS, VOCABULARY

MAX_ROW_BYTES = 2_000_000
SHA256 = "^[0-9a-f]{64}$"

_NUMBER = {"type": "number"}
_RATE = {"type": "number", "minimum": 0, "maximum": 1}
_COUNT = {"type": "integer", "minimum": 1}
_TEXT = {"type": "string", "maxLength": 300}
_KNEW = {
    "type": "object",
    "description": "what the agent knew (yahtzee_env.policies.knowledge): each fact one of "
    "the vocabulary, optionally followed by a detail in brackets",
    "required": list(FIELDS),
    "additionalProperties": False,
    "properties": {
        field: {
            "type": "string",
            "maxLength": 200,
            "pattern": "^(" + "|".join(re.escape(v) for v in VOCABULARY[field]) + r")( \(.+\))?$",
        }
        for field in FIELDS
    },
}
_MODEL = {
    "type": "object",
    "required": ["kind", "name", "sha256"],
    "additionalProperties": False,
    "properties": {
        "kind": {"enum": ["built-in", "level", "model file", "function", "python object"]},
        "name": _TEXT,
        "sha256": {"type": ["string", "null"], "pattern": SHA256},
        "path": {
            "type": "string",
            "maxLength": 300,
            "description": "the model file, relative to the row's folder: `yahtzee verify "
            "ROW.json` loads it from there",
        },
        "code": {
            "type": "array",
            "items": {"type": "string", "maxLength": 100},
            "description": "the modules that play the agent around its weights (a search)",
        },
        "code_sha256": {
            "type": "string",
            "pattern": SHA256,
            "description": "sha256 of `sha256sum` lines of the code's files "
            "(yahtzee_env.analysis.protocol.code_digest); absent: the weights play alone",
        },
        "table_sha256": {
            "type": "string",
            "pattern": SHA256,
            "description": "sha256 of the weights file of the network that plays at a 2-seat "
            "table, for a level of two networks (`sha256`: the one that plays elsewhere)",
        },
    },
}
_COMMON = {
    "row_format": {"const": "yahtzee-rl-benchmark-row"},
    "row_version": {"const": 1},
    "agent": _TEXT,
    "description": _TEXT,
    "source": _TEXT,
    "knew": _KNEW,
    "knew_from": {"enum": ["the agent", "stated by the submitter", "nobody", "its paper"]},
    "track": _TEXT,
    "same_weights_as": {
        "type": "string",
        "maxLength": 100,
        "description": "the agent of another row whose weights this row's model has (the same "
        "network under another name, alone or inside a search); `yahtzee results` refuses two "
        "rows with one weights digest under different agents unless one says so, and the "
        "solitaire leaderboard shows such a network once",
    },
    "rules": {"type": "string", "maxLength": 40},
    "version": {"type": ["string", "null"], "maxLength": 40},
}
_PROVENANCE = {
    "type": "object",
    "required": [
        "commit", "modified", "package_version", "solver_sha256", "dice_sha256", "numpy",
        "bit_generator", "python", "platform",
    ],
    "additionalProperties": False,
    "properties": {
        "commit": {"type": "string", "pattern": "^([0-9a-f]{40}|not a git checkout)$"},
        "modified": {"type": ["boolean", "null"]},
        "package_version": {"type": "string", "maxLength": 40},
        "solver_sha256": {"type": "string", "pattern": SHA256},
        "dice_sha256": {"type": "string", "pattern": SHA256},
        "numpy": {"type": "string", "maxLength": 40},
        "bit_generator": {"type": "string", "maxLength": 40},
        "python": {"type": "string", "maxLength": 40},
        "platform": {"type": "string", "maxLength": 200},
    },
}  # fmt: skip
SOLITAIRE = {
    "title": "solitaire row (yahtzee benchmark POLICY)",
    "type": "object",
    "required": [
        "row_format", "row_version", "kind", "agent", "knew", "track", "mean", "ci95",
        "expected_score", "expected_ci95", "optimum", "regret_per_game", "regret_ci95",
        "games", "seed", "rules", "protocol", "standard", "reproducible", "model",
        "provenance", "chunks",
    ],
    "additionalProperties": False,
    "properties": {
        **_COMMON,
        "kind": {"const": "solitaire"},
        "mean": _NUMBER,
        "ci95": _NUMBER,
        "expected_score": _NUMBER,
        "expected_ci95": _NUMBER,
        "optimum": _NUMBER,
        "regret_per_game": {"type": "number", "minimum": -1e-6},
        "regret_ci95": _NUMBER,
        "regret_per_decision": _NUMBER,
        "upper_bonus_rate": _RATE,
        "yahtzee_rate": _RATE,
        "games": _COUNT,
        "seed": {"type": "integer", "minimum": 0},
        "protocol": {"const": "yahtzee-benchmark-v1"},
        "standard": {"type": "boolean"},
        "reproducible": {"enum": ["deterministic", "seeded by the protocol", "no"]},
        "seed_spread": {
            "type": "object",
            "required": ["seeds", "expected_score", "mean"],
            "additionalProperties": False,
            "properties": {
                "seeds": {"type": "array", "items": {"type": "integer"}},
                "expected_score": {"type": "array", "items": _NUMBER},
                "mean": {"type": "array", "items": _NUMBER},
            },
        },
        "model": _MODEL,
        "provenance": _PROVENANCE,
        "assumed": {"type": "object"},
        "chunks": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["games", "score_sum", "regret_sum"],
                "additionalProperties": False,
                "properties": {
                    "games": _COUNT,
                    "score_sum": {"type": "integer", "minimum": 0},
                    "regret_sum": _NUMBER,
                },
            },
        },
        "evaluation": {"type": "object"},
    },
}  # fmt: skip
VERSUS = {
    "title": "multi-player row (yahtzee benchmark POLICY --players N --vs LEVEL,...)",
    "type": "object",
    "required": [
        "row_format", "row_version", "kind", "agent", "knew", "track", "players", "deals",
        "seed", "rules", "protocol", "opponents", "reproducible", "model", "provenance",
    ],
    "additionalProperties": False,
    "properties": {
        **_COMMON,
        "kind": {"const": "versus"},
        "players": {"type": "integer", "minimum": 2, "maximum": 4},
        "deals": _COUNT,
        "games": _COUNT,
        "seed": {"type": "integer", "minimum": 0},
        "protocol": {"const": "yahtzee-versus-v1"},
        "standard": {"type": "boolean"},
        "duplicate": {"type": "boolean"},  # every seat on the same dice (absent: false)
        "reproducible": {"enum": ["deterministic", "seeded by the protocol", "no"]},
        "seats": _TEXT,
        "interval": _TEXT,
        "model": _MODEL,
        "provenance": {
            **_PROVENANCE,
            "required": [k for k in _PROVENANCE["required"] if k != "solver_sha256"],
        },
        "opponents": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["opponent", "win_rate", "win_ci95", "margin", "margin_ci95"],
                "additionalProperties": False,
                "properties": {
                    "opponent": {"type": "string", "maxLength": 100},
                    "win_rate": _RATE,
                    "win_ci95": _NUMBER,
                    "wins": {"type": "integer", "minimum": 0},
                    "draws": {"type": "integer", "minimum": 0},
                    "losses": {"type": "integer", "minimum": 0},
                    "margin": _NUMBER,
                    "margin_ci95": _NUMBER,
                    "points_sum": _NUMBER,
                    "draw_rate": _RATE,
                    "decisive_win_rate": _RATE,
                    "decisive_ci95": _NUMBER,
                    "decisive_ci95_binomial": _NUMBER,
                },
            },
        },
    },
}  # fmt: skip
REPORTED = {
    "title": "reported row (a published number, not re-run here)",
    "type": "object",
    "required": ["row_format", "row_version", "kind", "agent", "knew", "track", "reported"],
    "additionalProperties": False,
    "properties": {
        **_COMMON,
        "kind": {"const": "reported"},
        "model": _MODEL,
        "reported": {
            "type": "object",
            "required": ["value", "statistic", "games", "source"],
            "additionalProperties": False,
            "properties": {
                "value": _NUMBER,
                "statistic": {"enum": ["mean", "median", "expected score"]},
                "games": {"type": ["integer", "null"], "minimum": 1},
                "source": _TEXT,
            },
        },
    },
}
KINDS = {"solitaire": SOLITAIRE, "versus": VERSUS, "reported": REPORTED}
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "yahtzee-rl-benchmark-row/1",
    "title": "A yahtzee-rl benchmark row (results/*.json)",
    "oneOf": list(KINDS.values()),
}


class RowError(ValueError):
    """A row that is not one of the schema's kinds; the message starts with the field."""


# ------------------------------------------------------------------------------ checking
_TYPES = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def _check(value: Any, schema: dict[str, Any], where: str) -> None:
    """The subset of JSON Schema that `SCHEMA` uses, with errors naming ``where``."""
    if "const" in schema and value != schema["const"]:
        raise RowError(f"{where}: must be {schema['const']!r}, got {_short(value)}")
    if "enum" in schema and value not in schema["enum"]:
        raise RowError(f"{where}: must be one of {schema['enum']}, got {_short(value)}")
    types = schema.get("type")
    if types is not None:
        types = [types] if isinstance(types, str) else types
        if not any(_TYPES[t](value) for t in types):
            raise RowError(f"{where}: must be {' or '.join(types)}, got {_short(value)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise RowError(f"{where}: must be a finite number, got {value}")
    if isinstance(value, str):
        if len(value) > schema.get("maxLength", math.inf):
            raise RowError(f"{where}: longer than {schema['maxLength']} characters")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            raise RowError(f"{where}: {_short(value)} does not match {schema['pattern']}")
    low, high = schema.get("minimum", -math.inf), schema.get("maximum", math.inf)
    if _TYPES["number"](value) and not low <= value <= high:
        raise RowError(f"{where}: {value} is out of range")
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                raise RowError(f"{where}.{key}: missing")
        props = schema.get("properties", {})
        for key, item in value.items():
            if key in props:
                _check(item, props[key], f"{where}.{key}")
            elif schema.get("additionalProperties", True) is False:
                raise RowError(f"{where}.{str(key)[:40]}: unknown field")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            raise RowError(f"{where}: needs at least {schema['minItems']} item(s)")
        if "items" in schema:
            for i, item in enumerate(value):
                _check(item, schema["items"], f"{where}[{i}]")


def _short(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_row(row: Any, where: str = "row") -> dict[str, Any]:
    """``row`` if it is a row of one of the schema's kinds, else `RowError` naming the field
    (``row.knew.reward: ...``). The ``track`` must be the one its ``knew`` gives."""
    from yahtzee_env.policies.knowledge import track

    if not isinstance(row, dict):
        raise RowError(f"{where}: a row is a JSON object")
    if row.get("row_format") != SOLITAIRE["properties"]["row_format"]["const"]:
        raise RowError(
            f"{where}.row_format: not a yahtzee-rl benchmark row (expected "
            f"'yahtzee-rl-benchmark-row', got {_short(row.get('row_format'))})"
        )
    kind = row.get("kind")
    if kind not in KINDS:
        raise RowError(f"{where}.kind: must be one of {list(KINDS)}, got {_short(kind)}")
    _check(row, KINDS[kind], where)
    if row["track"] != track(row["knew"]):
        raise RowError(
            f"{where}.track: {row['track']!r} is not what its knew gives ({track(row['knew'])!r})"
        )
    return row


def read_row(path: str | os.PathLike) -> dict[str, Any]:
    """The row in the file ``path``, checked (`RowError` for a bad one, naming the file)."""
    from yahtzee_env.fileio import read_regular_file

    try:
        data = read_regular_file(path, MAX_ROW_BYTES)
    except OSError as err:
        raise RowError(f"{path}: cannot read it ({err})") from None
    try:
        row = json.loads(data)
    except ValueError as err:
        raise RowError(f"{path}: not JSON ({err})") from None
    return check_row(row, Path(path).name)


def shipped_rows_folder() -> Path | None:
    """The rows this package carries: ``yahtzee_env/results/`` in an install (pyproject maps
    the repository's results/ there), the checkout's ``results/`` in a source tree; None if
    neither is there."""
    package = Path(__file__).resolve().parents[1]
    for folder in (package / "results", package.parent / "results"):
        if (folder / "schema.json").is_file():
            return folder
    return None


def load_rows(folder: str | os.PathLike) -> list[dict[str, Any]]:
    """Every ``*.json`` row in ``folder`` but ``schema.json``, checked, by file name."""
    paths = sorted(p for p in Path(folder).glob("*.json") if p.name != "schema.json")
    return [read_row(p) for p in paths]


def same_weights_problems(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Pairs of rows whose models have one weights digest under different agents, neither
    saying so (``same_weights_as`` naming the other, or both naming a third), and rows that
    say ``same_weights_as`` an agent whose weights differ from theirs: one network must not
    look like two agents on a leaderboard, nor two networks like one."""
    by_digest: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        digest = (r.get("model") or {}).get("sha256")
        if digest:
            by_digest.setdefault(digest, []).append(r)
    problems = []
    digest_of = {r["agent"]: d for d, group in by_digest.items() for r in group}
    for r in rows:
        same, digest = r.get("same_weights_as"), (r.get("model") or {}).get("sha256")
        if same in digest_of and digest and digest != digest_of[same]:
            problems.append(
                f'{r["agent"]!r} says "same_weights_as": {same!r}, but its weights (sha256 '
                f"{digest[:12]}...) are not {same!r}'s ({digest_of[same][:12]}...)"
            )
    for digest, group in by_digest.items():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                if a["agent"] != b["agent"] and _network(a) != _network(b):
                    problems.append(
                        f"{a['agent']!r} and {b['agent']!r} name the same weights (sha256 "
                        f"{digest[:12]}...) as different agents: one of them must say "
                        f'"same_weights_as": the other\'s agent'
                    )
    return problems


def _network(row: dict[str, Any]) -> str:
    """The agent a row's weights belong to: its own, or the one it says it shares them with."""
    return row.get("same_weights_as") or row["agent"]


def schema_text() -> str:
    return json.dumps(SCHEMA, indent=2) + "\n"


# ------------------------------------------------------------------------------ tables
def _ci(value: float, ci: float, digits: int = 2) -> str:
    return f"{value:.{digits}f} ± {ci:.{digits}f}"


def _rank(row: dict[str, Any]) -> float:
    if row["kind"] == "reported":
        return row["reported"]["value"]
    return row["expected_score"]


def _label(row: dict[str, Any], also: Sequence[str] = ()) -> str:
    name = row.get("description") or row["agent"]
    if also:
        name += f" (the same network: {'; '.join(also)})"
    return name if row["kind"] != "reported" else f"{name} (reported, not re-run)"


def _one_row_per_network(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], list[str]]]:
    """Each row with the agents whose rows say they share its weights (``same_weights_as``),
    those rows left out: a network is one row."""
    agents = {r["agent"] for r in rows}
    also: dict[str, list[str]] = {}
    kept = []
    for r in rows:
        same = r.get("same_weights_as")
        if same in agents and same != r["agent"]:
            also.setdefault(same, []).append(_short_name(r))
        else:
            kept.append(r)
    return [(r, also.get(r["agent"], [])) for r in kept]


def _short_name(row: dict[str, Any]) -> str:
    if row["kind"] == "reported":
        return f"run `{row['agent']}`"
    return f"`{row['agent']}` alone"


def solitaire_rows(rows: Iterable[dict[str, Any]]) -> list[tuple[dict[str, Any], list[str]]]:
    """The solitaire leaderboard's rows, best first, one per network (see `leaderboard_table`)."""
    chosen = [r for r in rows if r["kind"] in ("solitaire", "reported")]
    chosen = [r for r in chosen if r["kind"] == "reported" or (r["standard"] and r["seed"] == 0)]
    chosen.sort(key=_rank, reverse=True)
    return _one_row_per_network(chosen)


def short_rows(rows: Iterable[dict[str, Any]]) -> list[tuple[dict[str, Any], list[str]]]:
    """The README's short leaderboard: the shipped levels, the built-in baselines and the
    best row of every other track, best first."""
    ranked = solitaire_rows(rows)
    picked, tracks = [], set()
    for r, also in ranked:
        if (r.get("model") or {}).get("kind") in ("level", "built-in") and r["kind"] != "reported":
            picked.append((r, also))
            tracks.add(r["track"])
    for r, also in ranked:
        if r["track"] not in tracks and r["track"] != "not stated":
            picked.append((r, also))
            tracks.add(r["track"])
    order = {id(r): i for i, (r, _) in enumerate(ranked)}
    return sorted(picked, key=lambda pair: order[id(pair[0])])


def leaderboard_table(rows: Iterable[dict[str, Any]], style: str = "readme") -> str:
    """The solitaire leaderboard as a Markdown table, best first, one row per network (a row
    whose ``same_weights_as`` names another row's agent is named in that row, not repeated):
    what each agent knew (its track and five facts), then its numbers. ``style`` ``"readme"``
    is the short one (the levels, the baselines and the best row of each other track; the
    track and the numbers), ``"docs"`` every row with the five facts, the rates and how to
    reproduce the row."""
    if style not in ("readme", "docs"):
        raise ValueError(f"style must be 'readme' or 'docs', got {style!r}")
    rows = list(rows)
    if style == "readme":
        lines = [
            "| agent | track | expected score ± 95% CI | regret/game |",
            "|---|---|--:|--:|",
        ]
        for r, also in short_rows(rows):
            if r["kind"] == "reported":
                rep = r["reported"]
                games = f", {rep['games']:,} games" if rep["games"] else ""
                score, regret = f"{rep['value']:.2f} ({rep['statistic']}{games})", "—"
            else:
                score = _ci(r["expected_score"], r["expected_ci95"])
                regret = f"{r['regret_per_game']:.2f}"
            cells = [_label(r, also), r["track"], score, regret]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        return "\n".join(lines)
    header = ["agent", "track", *FIELDS, "expected score ± CI", "mean ± 95% CI", "regret/game"]
    align = ["---", "---", *["---"] * len(FIELDS), "--:", "--:", "--:"]
    header += ["upper bonus", "yahtzee", "reproduce"]
    align += ["--:", "--:", "---"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    for r, also in solitaire_rows(rows):
        facts = [r["knew"][f] for f in FIELDS]
        cells = [_label(r, also), r["track"], *facts]
        if r["kind"] == "reported":
            rep = r["reported"]
            games = f", {rep['games']:,} games" if rep["games"] else ""
            cells += [f"{rep['value']:.2f} ({rep['statistic']}{games})", "—", "—"]
            cells += ["—", "—", rep["source"]]
        else:
            cells += [
                _ci(r["expected_score"], r["expected_ci95"]),
                _ci(r["mean"], r["ci95"]),
                f"{r['regret_per_game']:.2f}",
                f"{100 * r['upper_bonus_rate']:.1f}%",
                f"{100 * r['yahtzee_rate']:.1f}%",
                r.get("source") or f"`yahtzee benchmark {r['model']['name']}`",
            ]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def versus_table(rows: Iterable[dict[str, Any]]) -> str:
    """The multi-player rows as a Markdown table: per agent and table size, its win rate
    (draws ½) ± 95% CI and mean margin against each standard opponent."""
    chosen = [r for r in rows if r["kind"] == "versus" and r.get("standard", False)]
    opponents: list[str] = []
    for r in chosen:
        for o in r["opponents"]:
            if o["opponent"] not in opponents:
                opponents.append(o["opponent"])
    chosen.sort(key=lambda r: (r["players"], -r["opponents"][0]["win_rate"]))
    head = ["agent", "players", "track", *(f"vs {o}: win rate, margin" for o in opponents)]
    lines = ["| " + " | ".join(head) + " |", "|---|--:|---|" + "--:|" * len(opponents)]
    for r in chosen:
        by = {o["opponent"]: o for o in r["opponents"]}
        label = _label(r)
        if r.get("same_weights_as"):
            label += f" (the weights of `{r['same_weights_as']}`)"
        cells = [label, str(r["players"]), r["track"]]
        for name in opponents:
            o = by.get(name)
            cells.append(
                "—"
                if o is None
                else f"{100 * o['win_rate']:.1f}% ± {100 * o['win_ci95']:.1f}, "
                f"{o['margin']:+.2f} ± {o['margin_ci95']:.2f}"
            )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


TABLES = {
    "leaderboard-readme": lambda rows: leaderboard_table(rows, "readme"),
    "leaderboard-docs": lambda rows: leaderboard_table(rows, "docs"),
    "versus": versus_table,
}


def marked(name: str) -> tuple[str, str]:
    """The comment lines around a generated table in a Markdown file."""
    return (
        f"<!-- results:{name} (generated from results/ by `yahtzee results --update`; "
        "do not edit by hand) -->",
        f"<!-- /results:{name} -->",
    )


def update_text(text: str, rows: Sequence[dict[str, Any]]) -> str:
    """``text`` with every marked table rewritten from ``rows``."""
    for name, make in TABLES.items():
        start, end = marked(name)
        if start not in text:
            continue
        before, rest = text.split(start, 1)
        if end not in rest:
            raise ValueError(f"{name}: the table's start marker has no end marker {end!r}")
        _, after = rest.split(end, 1)
        text = f"{before}{start}\n{make(rows)}\n{end}{after}"
    return text
