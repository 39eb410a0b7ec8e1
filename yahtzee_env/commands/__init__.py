"""Subcommands of the ``yahtzee`` command (see `yahtzee_env.cli`), and what they share."""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any


def _int_at_least(text: str, minimum: int, what: str) -> int:
    try:
        value = int(text)
    except (TypeError, ValueError):
        value = None
    if value is None or value < minimum:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """argparse ``type``: an integer >= 1 (``'0'`` -> "expected a positive integer, got '0'")."""
    return _int_at_least(text, 1, "a positive integer")


def non_negative_int(text: str) -> int:
    """argparse ``type``: an integer >= 0, e.g. a seed (numpy rejects negative seeds);
    ``'-1'`` -> "expected a non-negative integer, got '-1'"."""
    return _int_at_least(text, 0, "a non-negative integer")


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


def add_backend_arguments(parser: argparse.ArgumentParser) -> None:
    """``--backend local|ray`` and ``--address`` (see `backend_runner`)."""
    parser.add_argument(
        "--backend",
        choices=("local", "ray"),
        default=None,
        help="where the game chunks run: local (this process or worker processes, the "
        "default) or ray (Ray tasks; same results; needs the ray extra)",
    )
    parser.add_argument(
        "--address",
        default=None,
        help="Ray cluster to use (implies --backend ray; default: $RAY_ADDRESS, else Ray "
        "started in-process on this machine)",
    )


def check_backend(args: argparse.Namespace) -> str:
    """The backend the arguments ask for; `ValueError` for a contradiction, and the install
    hint (`yahtzee_env.ray_backend.RayMissingError`) when Ray is asked for but missing."""
    if args.backend == "local" and args.address:
        raise ValueError("--address needs --backend ray")
    backend = args.backend or ("ray" if args.address else "local")
    if backend == "ray":
        from yahtzee_env.ray_backend import require_ray

        require_ray()
    return backend


@contextlib.contextmanager
def backend_runner(args: argparse.Namespace) -> Iterator[Any]:
    """None for the local backend, else a `RayRunner` on a Ray session for the block."""
    if check_backend(args) != "ray":
        yield None
        return
    from yahtzee_env.ray_backend import RayRunner, ray_session

    with ray_session(args.address):
        yield RayRunner()
