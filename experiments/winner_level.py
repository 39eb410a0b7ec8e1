"""Assemble the ``winner`` level (issue 61; docs/win-level.md): the numpy export of a
`configs/winner.yaml` run (its table network: input version 3, both cards) and the shipped
level it started from, which plays alone and at tables of 3-4 seats, as one manifest of kind
``table-mlp`` (`yahtzee_env.policies.models.TABLE_MLP`).

    python experiments/winner_level.py data/win/winner/expert-init/model/winner.json --alone expert

Writes ``winner.json`` and ``winner.npz`` (the table network's weights, byte for byte) into
the levels' folder (``--out``); the network that plays alone is named by its file and digest
(``expert.npz``, already shipped), not copied. Nothing is trained or graded here.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from yahtzee_env.fileio import atomic_write
from yahtzee_env.game.observation import TABLE_INPUT_VERSION
from yahtzee_env.policies.models import (
    ARCHITECTURE_OUTPUTS,
    LEVELS_DIR,
    TABLE_MLP,
    level_manifest,
    load_opponent,
    read_manifest,
)


def level_manifest_of(table_raw: dict, alone_raw: dict, name: str, alone: str) -> dict:
    """The ``table-mlp`` manifest: ``alone_raw``'s network (a shipped level's manifest) plays
    alone, ``table_raw``'s (a table network's export) at 2 seats; the training facts are the
    table network's, the solitaire evaluation the other's (it is that network's play)."""
    arch, table_arch = alone_raw["architecture"], table_raw["architecture"]
    return {
        "format": alone_raw["format"],
        "format_version": alone_raw["format_version"],
        "architecture": {
            "type": TABLE_MLP,
            "inputs": arch["inputs"],
            "hidden": arch["hidden"],
            "outputs": arch["outputs"],
            "activation": arch["activation"],
            "output": ARCHITECTURE_OUTPUTS[TABLE_MLP],
        },
        "observation_version": alone_raw["observation_version"],
        "holds": alone_raw["holds"],
        "rules": table_raw["rules"],
        "level": name,
        "version": 1,
        "config_sha256": table_raw["config_sha256"],
        "config_digest_version": table_raw.get("config_digest_version"),
        "weights_file": alone_raw["weights_file"],
        "weights_sha256": alone_raw["weights_sha256"],
        "table": {
            "weights_file": f"{name}.npz",
            "weights_sha256": table_raw["weights_sha256"],
            "observation_version": TABLE_INPUT_VERSION,
            "inputs": table_arch["inputs"],
            "hidden": table_arch["hidden"],
            "outputs": table_arch["outputs"],
            "activation": table_arch["activation"],
            "holds": table_raw["holds"],
        },
        "source": table_raw["source"],
        "method": table_raw["method"],
        "objective": "win",
        "teacher": table_raw.get("teacher"),
        "env_steps": table_raw["env_steps"],
        "builds_on": {
            "two_seats": f"the table network ({name}.npz): the duelist distilled at a 2-seat "
            f"table from {alone}'s weights, then PPO with the result as its only reward",
            "other_tables": f"{alone} version {alone_raw['version']} (these weights are "
            f"{alone_raw['weights_file']}, byte for byte): alone and at 3-4 seats",
            "prior": alone,
        },
        "knew": table_raw["knew"],
        "evaluation": {
            **alone_raw["evaluation"],
            "note": f"solitaire: the level plays {alone}'s network (the same weights), so "
            f"{alone}'s evaluation",
        },
        **({"table_evaluation": table_raw["evaluation"]} if "evaluation" in table_raw else {}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", type=Path, help="the table network's export (NAME.json)")
    parser.add_argument("--alone", default="expert", help="the shipped level that plays alone")
    parser.add_argument("--name", default="winner")
    parser.add_argument("--out", type=Path, default=LEVELS_DIR)
    args = parser.parse_args()
    table = read_manifest(args.model)
    if table.input_version != TABLE_INPUT_VERSION or table.objective != "win":
        raise SystemExit(f"{args.model}: not a table network that plays to win")
    alone = level_manifest(args.alone)
    manifest = level_manifest_of(
        json.loads(args.model.read_text()), alone.raw, args.name, args.alone
    )
    args.out.mkdir(parents=True, exist_ok=True)
    if args.out.resolve() != alone.path.parent.resolve():
        shutil.copyfile(alone.weights_path, args.out / alone.weights_path.name)
    atomic_write(args.out / f"{args.name}.npz", table.weights_path.read_bytes())
    path = args.out / f"{args.name}.json"
    atomic_write(path, json.dumps(manifest, indent=2) + "\n")
    print(f"wrote {path} ({load_opponent(path)!r})")


if __name__ == "__main__":
    main()
