"""The levels as the page loads them (issue 50): a policy network's weights as raw float32.

The page (``yahtzee_env/web/static/js/policies/models.js``) plays a level offline with the same
masked argmax as `models.MLPPolicy`. It reads two files per level: ``NAME.json``, the web
manifest (architecture, input version, holds, the rules it learned, the sha256 of the
weights), and ``NAME.f32``, every layer's ``W [in, out]`` (row-major) then ``b [out]``,
little-endian float32, hidden layers first: the npz's numbers, bit for bit, in one flat file.

Only the levels that are a policy network (`models.MLP`) can run in the page; a level that
searches (``master``: expectimax through a 6 MB table of turn values; the ``duelist``: the
solver's table) needs the server, and `offline_levels` leaves it out.

    yahtzee export hard --format web --out site/levels
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from yahtzee_env.fileio import atomic_write
from yahtzee_env.game.rules import RuleSet
from yahtzee_env.policies.models import LEVELS, LEVELS_DIR, MLP, level_manifest, load_opponent

WEB_FORMAT = "yahtzee-rl-web-level"
WEB_FORMAT_VERSION = 1
WEIGHTS_SUFFIX = ".f32"
# Two logits closer than this are a near tie, where the page's network (float64 sums rounded
# per layer) and numpy's (float32 BLAS) may pick either action; float32 noise is ~1e-5.
TIE_TOLERANCE = 1e-3


def offline_levels() -> list[str]:
    """The shipped levels that can play in the page: the plain policy networks, weakest
    first (easy, medium, hard, expert)."""
    return list(_offline_levels())


@cache
def _offline_levels() -> tuple[str, ...]:
    return tuple(
        level
        for level in LEVELS
        if (LEVELS_DIR / f"{level}.json").exists() and level_manifest(level).kind == MLP
    )


@cache
def web_level(level: str) -> tuple[dict[str, Any], bytes]:
    """(web manifest, weights bytes) of a shipped policy-network level; ValueError naming
    the level when it cannot play in the page. The weights are loaded and checked by
    `models.load_opponent` (digest, shapes, finite values) first."""
    if level not in offline_levels():
        raise ValueError(
            f"level {level!r} cannot play in the page: offline levels are "
            f"{', '.join(offline_levels())} (a level that searches needs the server)"
        )
    policy = load_opponent(level)
    manifest = policy.manifest
    blob = b"".join(
        np.ascontiguousarray(a, dtype="<f4").tobytes() for w, b in policy.weights for a in (w, b)
    )
    web = {
        "format": WEB_FORMAT,
        "format_version": WEB_FORMAT_VERSION,
        "level": level,
        "version": manifest.version,
        "hidden": list(manifest.hidden),
        "activation": manifest.activation,
        "input_version": manifest.input_version,
        "holds": "canonical" if manifest.canonical_holds else "all",
        "rules": manifest.rules,
        "threshold": RuleSet.from_spec(manifest.rules).upper_bonus_threshold,
        "weights_file": level + WEIGHTS_SUFFIX,
        "weights_sha256": hashlib.sha256(blob).hexdigest(),
        "npz_sha256": manifest.weights_sha256,
    }
    return web, blob


def export_web(level: str, out: str | Path) -> list[Path]:
    """Write ``LEVEL.json`` and ``LEVEL.f32`` into ``out`` (atomically); return their paths."""
    web, blob = web_level(level)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    weights = out / web["weights_file"]
    manifest = out / f"{level}.json"
    atomic_write(weights, blob)
    atomic_write(manifest, (json.dumps(web, indent=2) + "\n").encode())
    return [manifest, weights]


__all__ = ["WEB_FORMAT", "export_web", "offline_levels", "web_level"]
