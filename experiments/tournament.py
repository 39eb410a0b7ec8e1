"""Round-robin tournament of policies; the ladder check of the CPU levels is

    OPENBLAS_NUM_THREADS=1 python experiments/tournament.py --policies hard,medium,easy \
        --games 5000 --seed 0 --json runs/ladder.json --plot runs/ladder.png

The same as ``yahtzee tournament`` (the logic is in `yahtzee_env.analysis.tournament`).
"""

from __future__ import annotations

import sys

from yahtzee_env.commands.cli import main

if __name__ == "__main__":
    sys.exit(main(["tournament", *sys.argv[1:]]))
