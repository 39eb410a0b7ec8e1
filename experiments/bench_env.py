"""Time Yahtzee-v0: the single env through gym.make and the native vector env.

    OPENBLAS_NUM_THREADS=1 python experiments/bench_env.py --steps 300000 --num-envs 4096

The same as ``yahtzee bench-env`` (see `yahtzee_env.analysis.bench` for what is timed).
"""

from __future__ import annotations

import sys

from yahtzee_env.commands.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench-env", *sys.argv[1:]]))
