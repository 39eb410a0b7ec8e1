"""What makes two benchmark rows comparable: the dice they were played on, the solver table
that graded them, and the code and machine that ran them (issue 29).

    from yahtzee_env.analysis.protocol import dice_digest, provenance

    dice_digest(10_000, seed=0)      # sha256 of every die the protocol's first games can see
    provenance(table, games=10_000, seed=0)

The protocol's games are chunk ``i`` of 4,096 games seeded by the ``i``-th child of
``SeedSequence(seed)`` (`yahtzee_env.analysis.evaluation.play_chunk`): the chunk's vector env is
reset with the first word of that child's state and draws one uniform ``r`` in ``[0, 6**5)``
per game per step (`yahtzee_env.envs.vector.roll_draws`), whatever the game does. A game sees
at most 39 rolls (13 turns of 3), the reset's and those after its first 38 steps, so the first
39 draws of every chunk are every die any agent can be dealt. Their digest depends on numpy's
bit generator (PCG64), on its bounded-integer algorithm and on Gymnasium's seeding, which is
what a row must show to claim the same games as another.
"""

from __future__ import annotations

import functools
import hashlib
import json
import platform
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

MAX_ROLLS_PER_GAME = 39  # 13 turns x 3 rolls: the draws a chunk's first games can use
NOT_A_CHECKOUT = "not a git checkout"


def chunk_sizes(games: int, chunk_size: int) -> list[int]:
    """The protocol's chunks: ``chunk_size`` games each, the last one shorter."""
    return [min(chunk_size, games - lo) for lo in range(0, games, chunk_size)]


def dice_digest(games: int, seed: int = 0, chunk_size: int = 4096) -> str:
    """sha256 (hex) over the protocol's header and, chunk by chunk, the first 39 draws of the
    chunk's dice stream (uint16, little-endian), drawn exactly as the env draws them."""
    from gymnasium.utils import seeding

    from yahtzee_env.envs.vector import roll_draws

    sizes = chunk_sizes(games, chunk_size)
    header = {"games": games, "seed": seed, "chunk_size": chunk_size, "rolls": MAX_ROLLS_PER_GAME}
    digest = hashlib.sha256(json.dumps(header, sort_keys=True).encode())
    for n, child in zip(sizes, np.random.SeedSequence(seed).spawn(len(sizes)), strict=True):
        env_seed = int(child.generate_state(2)[0])  # as `play_chunk` seeds the chunk's env
        rng, _ = seeding.np_random(env_seed)  # as the env's reset(seed=...) makes it
        for _ in range(MAX_ROLLS_PER_GAME):
            digest.update(roll_draws(rng, n).astype("<u2").tobytes())
    return digest.hexdigest()


def rotation_seed(seed: int, rotation: int, duplicate: bool) -> int | np.random.SeedSequence:
    """The dice seed of a rotation of the multi-player protocol: its seed for every rotation
    (each rotation replays the deal with the seats turned), or with duplicate dice
    ``SeedSequence([seed, rotation])`` (each rotation its own deal, all seats on its dice)."""
    return np.random.SeedSequence([seed, rotation]) if duplicate else seed


def versus_dice_digest(
    deals: int, players: int, seed: int = 0, batch_size: int = 1024, duplicate: bool = False
) -> str:
    """sha256 (hex) of the multi-player protocol's dice: per chunk and seat of
    `yahtzee_env.analysis.tournament.play_batched_games`, the first 39 draws of its stream;
    with duplicate dice, per rotation and chunk, the key its games' seeds come from."""
    from gymnasium.utils import seeding

    from yahtzee_env.analysis.tournament import seat_seeds
    from yahtzee_env.envs.vector import roll_draws

    header = {"deals": deals, "players": players, "seed": seed, "batch_size": batch_size}
    if duplicate:
        from yahtzee_env.game.fair_dice import SEED_BYTES

        header["duplicate"] = True
        digest = hashlib.sha256(json.dumps(header, sort_keys=True).encode())
        for r in range(players):
            chunks = seat_seeds(rotation_seed(seed, r, True), deals, players, batch_size)
            for _, _, env_seeds in chunks:
                rng, _ = seeding.np_random(env_seeds[0])
                digest.update(rng.bytes(SEED_BYTES))
        return digest.hexdigest()
    digest = hashlib.sha256(json.dumps(header, sort_keys=True).encode())
    for _, n, env_seeds in seat_seeds(seed, deals, players, batch_size):
        for env_seed in env_seeds:
            rng, _ = seeding.np_random(env_seed)
            for _ in range(MAX_ROLLS_PER_GAME):
                digest.update(roll_draws(rng, n).astype("<u2").tobytes())
    return digest.hexdigest()


def machine() -> dict[str, Any]:
    """The code and machine facts of a row: commit, modified, package version, numpy and its
    bit generator, Python, platform."""
    commit, modified = code_version()
    return {
        "commit": commit,
        "modified": modified,
        "package_version": package_version(),
        "numpy": np.__version__,
        "bit_generator": type(np.random.default_rng().bit_generator).__name__,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def solver_digest(table: Any) -> str:
    """sha256 (hex) of a solver table's values as the cache stores them (little-endian
    float32, NaN where unreachable): the grading of two rows is the same if these are."""
    values = np.ascontiguousarray(np.asarray(table.table), dtype="<f4")
    return hashlib.sha256(values.tobytes()).hexdigest()


def code_digest(modules: tuple[str, ...]) -> str:
    """sha256 (hex) of the source of the modules that play a row's agent beside its weights
    (a search around a network: the duelist's `yahtzee_env.policies.duel`): the sha256 of the
    lines ``"<sha256 of the file>  <module path>.py"`` that ``sha256sum`` prints for them,
    one per module, in the order given. ``sha256sum yahtzee_env/policies/duel.py | sha256sum``
    reproduces a one-module digest from a checkout."""
    import importlib
    import inspect

    lines = []
    for name in modules:
        source = Path(inspect.getsourcefile(importlib.import_module(name)) or "")
        lines.append(
            f"{hashlib.sha256(source.read_bytes()).hexdigest()}  {name.replace('.', '/')}.py\n"
        )
    return hashlib.sha256("".join(lines).encode()).hexdigest()


@functools.lru_cache(maxsize=1)
def code_version() -> tuple[str, bool | None]:
    """(commit, modified) of the checkout this package runs from: the commit's sha and
    whether tracked files differ from it; (``"not a git checkout"``, None) for an install."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return NOT_A_CHECKOUT, None
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()  # fmt: skip
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return NOT_A_CHECKOUT, None
    return commit, bool(status.strip())


def package_version() -> str:
    """The installed yahtzee-rl's version (the package's metadata; "unknown" if none)."""
    from importlib import metadata

    try:
        return metadata.version("yahtzee-rl")
    except metadata.PackageNotFoundError:
        return "unknown"


def provenance(table: Any, *, games: int, seed: int, chunk_size: int = 4096) -> dict[str, Any]:
    """The facts that make a row comparable with another: the commit (or ``"not a git
    checkout"``) and whether it was modified, the package version, the digests of the solver
    table and of the dice, numpy's version and bit generator, Python and the platform."""
    return {
        **machine(),
        "solver_sha256": solver_digest(table),
        "dice_sha256": dice_digest(games, seed, chunk_size),
    }


def check_protocol(protocol: Any) -> tuple[bool, str]:
    """Recompute the standard protocol's dice digest here: (same games?, a report in words)."""
    found = dice_digest(protocol.games, protocol.seed, protocol.chunk_size)
    bit_generator = type(np.random.default_rng().bit_generator).__name__
    where = f"numpy {np.__version__}, {bit_generator}, {platform.platform()}"
    if found == protocol.dice_sha256:
        return True, (
            f"this machine plays the standard protocol's games ({protocol.name}: "
            f"{protocol.games:,} games, seed {protocol.seed}; dice sha256 {found[:16]}...; {where})"
        )
    return False, (
        f"this machine does NOT play the standard protocol's games: dice sha256 {found[:16]}... "
        f"where the protocol's is {protocol.dice_sha256[:16]}... ({where}); its rows are not "
        "comparable game for game with the leaderboard's (numpy's bit generator or its integer "
        "algorithm differs)"
    )
