"""Subcommands of the ``yahtzee`` command (see `yahtzee_env.cli`), and what they share."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable


def progress_bar(label: str, unit: str, enabled: bool = True) -> Callable[[int, int], None]:
    """A ``report(done, total)`` callback drawing a text progress bar with a rate on stderr.

    Plain text (no tqdm), so it works on a core install and through pipes.
    """
    start = time.perf_counter()

    def report(done: int, total: int) -> None:
        if not enabled:
            return
        width = 30
        filled = round(width * done / max(total, 1))
        elapsed = time.perf_counter() - start
        rate = done / max(elapsed, 1e-9)
        sys.stderr.write(
            f"\r{label:<10} [{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,} {unit} "
            f"{elapsed:5.1f}s ({rate:,.0f} {unit}/s)"
        )
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return report
