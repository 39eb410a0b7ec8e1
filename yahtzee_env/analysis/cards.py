"""Model cards of the levels (``yahtzee card LEVEL``) and of any agent from its benchmark row
(``yahtzee card ROW.json``, `row_card`), in the Hugging Face Hub's layout: a
README.md whose YAML front matter (``library_name``, ``tags``, ``model-index`` with the
benchmark's numbers) the Hub reads, and a body with the method, what the model knew, the
config and env-steps, its benchmark rows, the intended use and the limits.

    from yahtzee_env.analysis.cards import model_card
    text = model_card("hard", rows)     # rows: yahtzee_env.analysis.results.load_rows("results")

Uploading is one ``huggingface_hub`` call (``HfApi().upload_folder(folder_path=DIR, ...)``
with the card beside NAME.json and NAME.npz); nothing here talks to the Hub.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from yahtzee_env.policies.knowledge import FIELDS, knowledge_of_manifest, track

METHODS = {
    "ppo": "PPO (sb3-contrib MaskablePPO) on the native vector env, no teacher",
    "distilled": "imitation of a teacher (softmax of its action values), before or with PPO",
    "model-based": "turn-start values learned from its own games, each turn played by "
    "expectimax through the exact rules",
    "search": "no learning of its own: a search on top of other players (the duelist: the "
    "solver's moves and an exact win-probability search over the last turns at a 2-seat "
    "table, hard's network elsewhere)",
}


def _objective_limit(objective: str | None, manifest: Any = None) -> str:
    """What the level plays for (`Manifest.objective`), as a limit: the score, or ``"win"``
    at a 2-seat table only (by a search, or by a table network: `models.TABLE_MLP`)."""
    if objective == "win" and getattr(manifest, "table", None) is not None:
        prior = _prior(manifest)
        return (
            "- It plays to win only at a 2-seat table (its table network is shown both cards "
            f"there); alone and at 3-4 seats it plays as {prior} does. It learned the table "
            "from a teacher (the duelist's moves) and from its own results, with no search at "
            "play time: against the solver it wins less often than the duelist does (its "
            "rows above)."
        )
    if objective == "win":
        return (
            "- It plays to win only at a 2-seat table (it is shown both cards there); alone and "
            "at 3-4 seats it plays as hard does. Its model of the opponent is an expected-score "
            "player, exact against the solver and an approximation against others."
        )
    return (
        "- It maximises its own expected score; it does not look at opponents' cards, so it "
        "does not take the risks that win a table when behind."
    )


def _q(text: str) -> str:
    """A YAML scalar: a JSON string is valid YAML."""
    return json.dumps(text, ensure_ascii=False)


def _rows_of(level: str, rows: Sequence[dict[str, Any]]) -> tuple[dict | None, dict | None]:
    solo = versus = None
    for r in rows:
        if r.get("model", {}).get("kind") == "level" and r["model"]["name"] == level:
            if r["kind"] == "solitaire" and r["standard"]:
                solo = r
            elif r["kind"] == "versus":
                versus = r
    return solo, versus


def _prior(manifest: Any) -> str:
    """The level a two-network level started from, which plays where its table does not."""
    return manifest.raw.get("builds_on", {}).get("prior", "another level")


def _table_network(manifest: Any) -> list[str]:
    """A two-network level's (`models.TABLE_MLP`) lines on the network that plays at a
    2-seat table and on the one that plays elsewhere; nothing for one network."""
    table = manifest.table
    if table is None:
        return []
    raw = table.raw
    layers = " → ".join(str(x) for x in [raw["inputs"], *raw["hidden"], raw["outputs"]])
    prior = _prior(manifest)
    return [
        f"- at a 2-seat table: its table network, {layers}, {raw['activation']} (input version "
        f"{table.input_version}: both cards), weights `{raw['weights_file']}`, sha256 "
        f"`{table.weights_sha256}`; alone and at 3-4 seats: {prior}'s network (the weights "
        "above)",
    ]


def model_card(level: str, rows: Sequence[dict[str, Any]]) -> str:
    """The card of the shipped ``level`` (its manifest) with its rows from ``rows``."""
    from yahtzee_env.analysis.protocol import package_version
    from yahtzee_env.policies.models import LEVELS, LEVELS_DIR, read_manifest

    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}: one of {', '.join(LEVELS)}")
    manifest = read_manifest(LEVELS_DIR / f"{level}.json")
    raw = manifest.raw
    knew = knowledge_of_manifest(manifest)
    solo, versus = _rows_of(level, rows)
    front = [
        "---",
        "library_name: yahtzee-rl",
        "license: mit",
        "pipeline_tag: reinforcement-learning",
        "tags:",
        *(f"  - {_q(t)}" for t in ("reinforcement-learning", "yahtzee", "gymnasium", "numpy")),
    ]
    if solo is not None:
        front += _model_index(level, solo)
    front.append("---")
    arch = raw["architecture"]
    layers = " → ".join(str(x) for x in [arch["inputs"], *arch["hidden"], arch["outputs"]])
    body = [
        "",
        f"# {level} (yahtzee-rl level, version {manifest.version})",
        "",
        f"A CPU opponent of yahtzee-rl "
        f"{package_version()}: `{manifest.kind}` {layers}, {arch['activation']}; it plays with "
        "numpy alone (`yahtzee_env.policies.models.load_opponent`).",
        "",
        "## Method",
        "",
        f"- method: {METHODS.get(manifest.method or '', 'not stated')} (the manifest's "
        f"`method`: `{manifest.method}`; its track, from what it knew: {track(knew)})",
        f"- objective: {manifest.objective or 'score'} (the manifest's `objective`: "
        + ("winning a 2-seat table" if manifest.objective == "win" else "its own expected score")
        + ")",
        f"- teacher: {raw.get('teacher') or 'none'}",
        f"- how it plays: {arch['output']}",
        f"- source: `{raw.get('source', 'not stated')}`",
        f"- env-steps behind the weights: {manifest.env_steps:,}"
        + (f" ({raw['games']:,} games)" if "games" in raw else ""),
        f"- training config sha256: `{manifest.config_sha256}`",
        f"- weights: `{raw['weights_file']}`, sha256 `{manifest.weights_sha256}`",
        *_table_network(manifest),
        "",
        *_what_it_knew(knew, track(knew)),
        "## Benchmark",
        "",
    ]
    if solo is not None:
        p = solo["provenance"]
        body += [
            f"`yahtzee benchmark {level}` ({solo['protocol']}, {solo['games']:,} games, seed "
            f"{solo['seed']}, {solo['rules']} rules; `yahtzee verify results/{level}.json "
            f"{level}` replays it)"
            + (
                f"; alone it plays {solo['same_weights_as']}'s network, so this row states "
                f"{solo['same_weights_as']}'s facts (track: {solo['track']}):"
                if solo.get("same_weights_as")
                else ":"
            ),
            "",
            "| expected score ± CI | mean ± 95% CI | regret/game | upper bonus | yahtzee |",
            "|--:|--:|--:|--:|--:|",
            f"| {solo['expected_score']:.2f} ± {solo['expected_ci95']:.2f} | "
            f"{solo['mean']:.2f} ± {solo['ci95']:.2f} | {solo['regret_per_game']:.2f} | "
            f"{100 * solo['upper_bonus_rate']:.1f}% | {100 * solo['yahtzee_rate']:.1f}% |",
            "",
            f"Dice sha256 `{p['dice_sha256'][:16]}…`, solver table sha256 "
            f"`{p['solver_sha256'][:16]}…`, numpy {p['numpy']} ({p['bit_generator']}), "
            f"yahtzee-rl {p['package_version']}.",
            "",
        ]
    else:
        body += ["No benchmark row in results/ yet.", ""]
    if versus is not None:
        body += [
            f"Two players (`yahtzee benchmark {level} --players 2 --vs "
            f"{','.join(o['opponent'] for o in versus['opponents'])}`, {versus['deals']:,} "
            "deals × 2 seat orders; a draw counts ½):",
            "",
            "| opponent | win rate ± 95% CI | mean margin ± 95% CI |",
            "|---|--:|--:|",
            *(
                f"| {o['opponent']} | {100 * o['win_rate']:.1f}% ± {100 * o['win_ci95']:.1f} | "
                f"{o['margin']:+.2f} ± {o['margin_ci95']:.2f} |"
                for o in versus["opponents"]
            ),
            "",
        ]
    body += [
        "## Intended use",
        "",
        "An opponent for people and agents (the terminal game, the browser game, "
        "`YahtzeeVs-v0`, the PettingZoo env), a baseline for solitaire-score research, and a "
        "rung of the levels' ladder. Compare it with other agents of the same track: its "
        "facts above say what it was given.",
        "",
        "## Limits",
        "",
        f"- It learned the **{manifest.rules}** rules; under another preset it still plays "
        "(the mask keeps its moves legal) but as it learned, labelled "
        f'"trained for {manifest.rules} rules".',
        _objective_limit(manifest.objective, manifest),
        "- Its numbers hold for the benchmark's protocol; other seeds give other sample "
        "means within the CIs, and the expected score is the sharper estimate.",
        "",
        "## Use",
        "",
        "```python",
        "from yahtzee_env.policies.models import load_opponent",
        "",
        f'policy = load_opponent("{level}")  # or a path to {level}.json beside '
        f"{raw['weights_file']}",
        'action = policy.act(obs, info["action_mask"])',
        "```",
        "",
        "Cite yahtzee-rl with its `CITATION.cff`.",
        "",
    ]
    return "\n".join(front + body)


def _what_it_knew(knew: dict[str, str], track_name: str, said_by: str | None = None) -> list[str]:
    """The card's "What it knew" section: the track, who said the facts, the five facts."""
    by = f" (what it knew: {said_by})" if said_by else ""
    return [
        "## What it knew",
        "",
        f"Track: **{track_name}**{by}.",
        "",
        "| fact | value |",
        "|------|-------|",
        *(f"| {f} | {knew[f]} |" for f in FIELDS),
        "",
    ]


def _model_index(name: str, row: dict[str, Any]) -> list[str]:
    """The front matter's ``model-index`` of a solitaire row (expected score and mean)."""
    task = f"Yahtzee-v0, {row['rules']} rules ({row['protocol']})"
    expected = f"{row['expected_score']:.2f} +/- {row['expected_ci95']:.2f}"
    mean = f"{row['mean']:.2f} +/- {row['ci95']:.2f}"
    return [
        "model-index:",
        f"  - name: {_q(name)}",
        "    results:",
        "      - task:",
        "          type: reinforcement-learning",
        "          name: reinforcement-learning",
        "        dataset:",
        f"          name: {_q(task)}",
        "          type: Yahtzee-v0",
        "        metrics:",
        "          - type: expected_score",
        f"            value: {_q(expected)}",
        "            name: expected score (optimum - regret)",
        "            verified: false",
        "          - type: mean_reward",
        f"            value: {_q(mean)}",
        f"            name: mean score ({row['games']:,} games)",
        "            verified: false",
    ]


def row_card(row: dict[str, Any], row_path: str = "ROW.json") -> str:
    """The card of any agent from its benchmark row (a checked solitaire or versus row, as
    `yahtzee benchmark ... --json` writes it): what made it (the row's model and its digest),
    what it knew and its track, its numbers, and how to verify them."""
    if row["kind"] == "reported":
        raise ValueError(
            "a 'reported' row is a published number with no model: a card needs a row that "
            "`yahtzee benchmark` wrote"
        )
    name = row["agent"]
    model = row["model"]
    front = [
        "---",
        "library_name: yahtzee-rl",
        "pipeline_tag: reinforcement-learning",
        "tags:",
        *(f"  - {_q(t)}" for t in ("reinforcement-learning", "yahtzee", "gymnasium")),
    ]
    if row["kind"] == "solitaire":
        front += _model_index(name, row)
    front.append("---")
    digest = f", sha256 `{model['sha256']}`" if model.get("sha256") else ""
    named = model["kind"] in ("level", "built-in", "function") or "path" in model
    verify = f"yahtzee verify {row_path}" + ("" if named else " MODEL")
    body = [
        "",
        f"# {name}",
        "",
        row.get("description") or f"An agent graded by yahtzee-rl {row.get('version')}.",
        "",
        "## Model",
        "",
        f"- {model['kind']} `{model['name']}`{digest}",
        f"- rules: {row['rules']}; reproducible: {row['reproducible']}",
        "",
        *_what_it_knew(row["knew"], row["track"], row.get("knew_from", "not stated")),
        "## Benchmark",
        "",
    ]
    if row["kind"] == "solitaire":
        body += [
            f"{row['protocol']}, {row['games']:,} games, seed {row['seed']}, {row['rules']} "
            f"rules (`{verify}` replays it):",
            "",
            "| expected score ± CI | mean ± 95% CI | regret/game |",
            "|--:|--:|--:|",
            f"| {row['expected_score']:.2f} ± {row['expected_ci95']:.2f} | {row['mean']:.2f} ± "
            f"{row['ci95']:.2f} | {row['regret_per_game']:.2f} |",
            "",
        ]
    else:
        body += [
            f"{row['protocol']}, {row['players']} players, {row['deals']:,} deals, seats "
            f"rotated; a draw counts ½ (`{verify}` replays it):",
            "",
            "| opponent | win rate ± 95% CI | mean margin ± 95% CI |",
            "|---|--:|--:|",
            *(
                f"| {o['opponent']} | {100 * o['win_rate']:.1f}% ± {100 * o['win_ci95']:.1f} | "
                f"{o['margin']:+.2f} ± {o['margin_ci95']:.2f} |"
                for o in row["opponents"]
            ),
            "",
        ]
    body += [
        "## Limits",
        "",
        "- Compare it only with agents of the same track: its facts above say what it was given.",
        "- Its numbers hold for the benchmark's protocol; the expected score is the sharper "
        "estimate of its strength than the sample mean.",
        "",
        "Cite yahtzee-rl with its `CITATION.cff`.",
        "",
    ]
    return "\n".join(front + body)
