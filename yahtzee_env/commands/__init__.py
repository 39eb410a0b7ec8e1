"""Subcommands of the ``yahtzee`` command (see `yahtzee_env.commands.cli`), and what they share."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
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


def shipped_levels() -> tuple[str, ...]:
    """The shipped CPU levels, weakest first (discovered from their manifests)."""
    from yahtzee_env.policies.models import LEVELS

    return LEVELS


def policy_names(text: str) -> list[str]:
    """Comma-separated policy names; ``levels`` stands for every shipped level, weakest
    first (so that scripts and the Makefile need not list them)."""
    names = []
    for name in (n.strip() for n in text.split(",")):
        if name == "levels":
            names.extend(shipped_levels())
        elif name:
            names.append(name)
    return names


MODEL_FILES = "a model .json, .onnx, SB3 .zip or run folder"


def int_in_range(minimum: int, maximum: int) -> Callable[[str], int]:
    """argparse ``type``: an integer in ``minimum..maximum``; a larger count is refused up
    front with its limit (``--games 10**12``: "at most 10,000,000")."""

    def parse(text: str) -> int:
        what = "a positive integer" if minimum == 1 else f"an integer >= {minimum:,}"
        value = _int_at_least(text, minimum, what)
        if value > maximum:
            raise argparse.ArgumentTypeError(
                f"at most {maximum:,} (got {text if len(text) < 20 else text[:12] + '...'})"
            )
        return value

    return parse


# The optional extra that brings each importable package (the install hint of a missing one).
EXTRA_OF_MODULE = {
    "torch": "train",
    "stable_baselines3": "train",
    "sb3_contrib": "train",
    "yaml": "train",
    "tensorboard": "train",
    "yahtzee_agents": "train",
    "onnx": "export",
    "onnxruntime": "export",
    "matplotlib": "plot",
    "pettingzoo": "multiplayer",
    "minari": "dataset",
    "pyarrow": "dataset",
    "wandb": "track",
}


def missing_extra_hint(err: ImportError, what: str = "this") -> str:
    """One line for a missing optional dependency: which package, and the extra to install
    (``pip install 'yahtzee-rl[train]'``)."""
    from yahtzee_env.policies.sources import MissingExtraError

    if isinstance(err, MissingExtraError):  # its message is the hint already
        return str(err)
    name = (err.name or "").split(".")[0]
    extra = EXTRA_OF_MODULE.get(name)
    if extra is None:
        return f"{what} needs a package that is not installed ({err})"
    return f"{what} needs {name} (pip install 'yahtzee-rl[{extra}]')"


class OutputPathError(ValueError):
    """An output path that cannot be written (a directory, /proc/x, /dev/null/x, ...)."""


def _probe_directory(folder: Path, option: str) -> None:
    """Create ``folder`` (and its parents) if needed and check that a file can be created in
    it, by creating and removing one: the only test that also holds for root and odd file
    systems (/proc)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputPathError(f"{option} {folder}: exists and is not a folder") from None
    except OSError as err:
        raise OutputPathError(f"{option} {folder}: cannot create it ({err.strerror})") from None
    try:
        fd, name = tempfile.mkstemp(prefix=".yahtzee-write-check-", dir=folder)
    except OSError as err:
        raise OutputPathError(f"{option} {folder}: cannot write there ({err.strerror})") from None
    os.close(fd)
    os.unlink(name)


def check_output_file(path: Path | None, option: str) -> None:
    """Raise `OutputPathError` (one line naming ``option``) unless ``path`` can be written
    as a file: not a folder nor a device, in a folder that exists (or can be made) and takes
    new files. Run it before the work, so that a bad path costs nothing."""
    if path is None:
        return
    text = os.fspath(path)
    if not text or "\0" in text:
        raise OutputPathError(f"{option}: not a file path: {text!r}")
    if path.exists() or path.is_symlink():
        if path.is_dir():
            raise OutputPathError(f"{option} {path}: is a directory; give a file name")
        if not path.is_file():
            raise OutputPathError(f"{option} {path}: exists and is not a regular file")
    _probe_directory(path.parent, option)


def check_output_dir(path: Path | None, option: str) -> None:
    """Raise `OutputPathError` unless ``path`` is (or can be made) a folder that takes files."""
    if path is None:
        return
    text = os.fspath(path)
    if not text or "\0" in text:
        raise OutputPathError(f"{option}: not a folder path: {text!r}")
    _probe_directory(path, option)


PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def check_plain_name(name: str, option: str) -> str:
    """``name`` if it is a plain file name (letters, digits, ``._-``, 1-100 characters, no
    leading dot): never a path (``../../escape``), NUL or an empty string."""
    if not PLAIN_NAME.fullmatch(name) or name.endswith("."):
        raise OutputPathError(
            f"{option} must be a plain file name (letters, digits, '.', '_', '-'; at most 100 "
            f"characters; not starting with '.'), got {name[:120]!r}"
        )
    return name


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
    hint (`yahtzee_env.analysis.ray_backend.RayMissingError`) when Ray is asked for but missing."""
    if args.backend == "local" and args.address:
        raise ValueError("--address needs --backend ray")
    backend = args.backend or ("ray" if args.address else "local")
    if backend == "ray":
        from yahtzee_env.analysis.ray_backend import require_ray

        require_ray()
    return backend


@contextlib.contextmanager
def backend_runner(args: argparse.Namespace) -> Iterator[Any]:
    """None for the local backend, else a `RayRunner` on a Ray session for the block."""
    if check_backend(args) != "ray":
        yield None
        return
    from yahtzee_env.analysis.ray_backend import RayRunner, ray_session

    with ray_session(args.address):
        yield RayRunner()
