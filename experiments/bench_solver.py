"""Time the exact solver: wall time, CPU time and peak memory of one full solve.

    python experiments/bench_solver.py --rules official

BLAS is pinned to one thread unless OPENBLAS_NUM_THREADS is set (the solve barely uses it).
"""

from __future__ import annotations

import argparse
import os
import resource
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from yahtzee_env.game.rules import PRESETS  # imported after pinning the BLAS threads
from yahtzee_env.solver.exact import solve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="official", choices=list(PRESETS))
    args = parser.parse_args()

    wall, cpu = time.perf_counter(), time.process_time()
    table = solve(args.rules)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(
        f"rules={args.rules} expected_score={table.expected_score:.4f} "
        f"wall={wall:.2f}s cpu={cpu:.2f}s peak_rss={peak_mib:.0f}MiB "
        f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}"
    )


if __name__ == "__main__":
    main()
