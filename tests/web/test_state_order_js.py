"""The page's rule for which of a table's states it shows (``static/js/table/order.js``),
run by Node: a state read before a change that moved no game or move (a client seed, a
name) and delivered after it does not undo it (the CI failure of stop 65, issue 58)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ORDER_JS = (
    Path(__file__).parents[2] / "yahtzee_env" / "web" / "static" / "js" / "table" / "order.js"
)
NODE = shutil.which(os.environ.get("YAHTZEE_NODE", "node"))

pytestmark = pytest.mark.skipif(NODE is None, reason="no node (apt-get install nodejs)")

CASES = [  # (state, shown, shown next?)
    ({"version": [0, 5], "rev": 9}, {"version": [0, 4], "rev": 10}, True),  # a later move
    ({"version": [1, 0], "rev": 3}, {"version": [0, 40], "rev": 8}, True),  # the next game
    ({"version": [0, 3], "rev": 20}, {"version": [0, 4], "rev": 10}, False),  # an older move
    ({"version": [0, 4], "rev": 11}, {"version": [0, 4], "rev": 10}, True),  # a seed landed
    ({"version": [0, 4], "rev": 10}, {"version": [0, 4], "rev": 11}, False),  # read before it
    ({"version": [0, 4], "rev": 11}, {"version": [0, 4], "rev": 11}, True),  # the same again
    ({"version": [0, 4]}, {"version": [0, 4]}, True),  # an in-page game: no rev
    ({"version": [0, 4], "rev": 2}, {"version": [-1, -1]}, True),  # the first state
]

SCRIPT = """
import { newer } from %s;
let input = "";
for await (const chunk of process.stdin) input += chunk;
const cases = JSON.parse(input);
console.log(JSON.stringify(cases.map(([state, shown]) => newer(state, shown))));
"""


def test_a_state_is_shown_unless_an_older_one_by_move_then_revision(tmp_path):
    (tmp_path / "package.json").write_text('{"type": "module"}')
    shutil.copy(ORDER_JS, tmp_path / "order.js")
    script = tmp_path / "run.mjs"
    script.write_text(SCRIPT % json.dumps("./order.js"))
    done = subprocess.run(
        [NODE, str(script)], input=json.dumps([c[:2] for c in CASES]),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [c[2] for c in CASES]
