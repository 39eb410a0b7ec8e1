"""What a web move leaves for the cyclic garbage collector (issue 33, fifth round): the
objects the collector tracks that a move makes and that are still alive afterwards, per
move, by type, and how many of them the tables' kept events hold; then, after one young
collection (which stops tracking tuples of numbers), how many reach the middle generation,
whose collections walk them all at once. The moves are
`bench_move_path.py`'s (`Tables.act` and the state for the ack, on a temporary SQLite
file), with the collector off while they run.

    python experiments/gc_survivors.py --tables 300 --rounds 20
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yahtzee_env.web.storage import open_storage
from yahtzee_env.web.tables.authority import Tables


def reachable(roots, only: set[int]) -> int:
    """How many of the objects whose ids are in ``only`` the roots reach (tracked ones)."""
    seen: set[int] = set()
    stack = list(roots)
    found = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or not gc.is_tracked(obj):
            continue
        seen.add(id(obj))
        found += id(obj) in only
        stack.extend(gc.get_referents(obj))
    return found


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=20, help="moves per table, measured")
    parser.add_argument("--warmup", type=int, default=10, help="moves per table before")
    parser.add_argument("--opponent", default="medium")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        storage = open_storage(Path(tmp) / "web.sqlite3")
        tables = Tables(storage, 10**6, 10**6)
        made = []
        for i in range(args.tables):
            table, tokens = tables.create(
                {"seats": ["human", args.opponent]}, f"10.{i // 250}.{i % 250}.1", None
            )
            made.append((table.code, tokens[0]))

        def play(rounds: int) -> None:
            for _ in range(rounds):
                for code, token in made:
                    table = tables.loaded[code]
                    game = table.game
                    if game.over:
                        intent = {"type": "next"}
                    elif game.rolls_left == 2 and rng.random() < 0.8:
                        intent = {"type": "roll", "hold": [0]}
                    else:
                        options = tables.state(table)["options"]
                        intent = {"type": "score", "box": max(options, key=options.get)}
                    table, first = tables.act(code, 0, token, intent, len(table.log), table.idx)
                    tables.state(table, first)

        play(args.warmup)
        gc.collect()
        gc.disable()
        try:
            play(args.rounds)
            young = gc.get_objects(generation=0)
            survivors = len(young)
            moves = args.rounds * args.tables
            ids = {id(o) for o in young}
            events = reachable([tables.loaded[c].events for c, _ in made], ids)
            by_type = collections.Counter(type(o).__name__ for o in young).most_common(8)
            del young
            gc.collect(0)  # a young collection: what is left moves on (tuples of numbers untracked)
            middle = gc.get_objects(generation=1)
            reaching = len(middle)
            middle_events = reachable(
                [tables.loaded[c].events for c, _ in made], {id(o) for o in middle}
            )
            del middle
        finally:
            gc.enable()
        storage.close()
    out = {
        "command": " ".join(sys.argv[1:] if argv is None else argv),
        "tables": args.tables,
        "moves": moves,
        "tracked_survivors_per_move": round(survivors / moves, 2),
        "held_by_kept_events_per_move": round(events / moves, 2),
        "reaching_middle_generation_per_move": round(reaching / moves, 2),
        "of_them_held_by_kept_events_per_move": round(middle_events / moves, 2),
        "by_type_per_move": {k: round(v / moves, 2) for k, v in by_type},
    }
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    main()
