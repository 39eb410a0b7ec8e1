"""The site around the game: the page's files, its offline levels and service worker,
the lobby's config, and the process's health (`routes` answers each in one line).

    GET  /, /t/CODE, /stats, /games/GID, /leaderboard, /w/ID   the page (one file)
    GET  /api/config                      what the lobby offers (`lobby_config`)
    GET  /levels/NAME.json | NAME.f32     a level as the page plays it offline (issue 50)
    GET  /sw.js                           the service worker (its cache: the page offline)
    GET  /healthz, /readyz                the process is up; its database answers
    GET  /api/bench-stats                 (``--bench-stats``) what the process has spent
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, Response

from yahtzee_env.game.rules import BOX_NAMES, NUM_UPPER, PRESETS
from yahtzee_env.web.people.matchmaking import DEFAULT_WAIT, WAIT_RANGE, WAITS
from yahtzee_env.web.storage import SchemaError, describe_target
from yahtzee_env.web.tables.table import (
    BANK_ADD_RANGE,
    DEFAULT_FILL,
    MAX_SEATS,
    MIN_SEATS,
    ONLINE_TURN_TIMER,
    TIME_BANKS,
    TURN_TIMER_RANGE,
    TURN_TIMERS,
    cpu_levels,
    main_levels,
)

STATIC_DIR = Path(__file__).parents[1] / "static"  # yahtzee_env/web/static


def offline_levels() -> list[str]:
    """The levels the page plays offline: the policy networks (`policies.web_levels`)."""
    from yahtzee_env.policies.web_levels import offline_levels as levels

    return levels()


def languages() -> list[dict[str, str]]:
    """The page's languages: one catalogue per file ``static/i18n/<code>.json`` (its
    ``_name`` is the language's own name), so a new language is one new file."""
    out = []
    for path in sorted((STATIC_DIR / "i18n").glob("*.json")):
        try:
            name = json.loads(path.read_text(encoding="utf-8")).get("_name", path.stem)
        except (OSError, ValueError):
            continue
        out.append({"code": path.stem, "name": name})
    return out


def lobby_config() -> dict[str, Any]:
    """What the lobby offers, read from where it is enforced (`tables`): the CPU levels,
    the rules presets, the seat counts, the turn timer's range and suggestions, the boxes."""
    return {
        "levels": cpu_levels(),
        "main_levels": main_levels(),
        "offline_levels": offline_levels(),  # the levels the page can play offline
        "fill": DEFAULT_FILL,
        "rules": list(PRESETS),
        "max_seats": MAX_SEATS,
        "min_seats": MIN_SEATS,
        "turn_timers": list(TURN_TIMERS),
        "turn_timer_range": list(TURN_TIMER_RANGE),
        "turn_timer_online": ONLINE_TURN_TIMER,
        "time_banks": [list(b) for b in TIME_BANKS],  # the lobby's (add, cap): issue 62
        "bank_add_range": list(BANK_ADD_RANGE),
        "boxes": list(BOX_NAMES),  # the card's order (actions 32.. score them so)
        "upper_boxes": NUM_UPPER,
        "languages": languages(),
        "quick_waits": list(WAITS),  # quick match (`matchmaking`)
        "quick_wait_range": list(WAIT_RANGE),
        "quick_default_wait": DEFAULT_WAIT,
    }


@functools.cache
def service_worker_script() -> str:
    """``static/sw.js`` with what it caches in front (`self.PRECACHE`: the page, its config,
    every static file, the offline levels' files) and a digest of all of it (`self.VERSION`):
    any changed file is a new worker, which replaces the cache."""
    from yahtzee_env.policies.web_levels import web_level

    files = sorted(p for p in STATIC_DIR.rglob("*") if p.is_file() and p.name != "sw.js")
    digest = hashlib.sha256()
    urls = ["/", "/api/config"]
    for path in files:
        rel = path.relative_to(STATIC_DIR).as_posix()
        urls.append(f"/static/{rel}")
        digest.update(rel.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    for level in offline_levels():
        manifest, _ = web_level(level)
        urls += [f"/levels/{level}.json", f"/levels/{manifest['weights_file']}"]
        digest.update(manifest["weights_sha256"].encode())
    worker = (STATIC_DIR / "sw.js").read_text(encoding="utf-8")
    digest.update(worker.encode())
    version = json.dumps(digest.hexdigest()[:16])
    return f"self.PRECACHE = {json.dumps(urls)};\nself.VERSION = {version};\n{worker}"


async def service_worker() -> Response:
    """The service worker at the site's root (its scope is every page): never cached by
    HTTP (``no-cache``: the browser checks it at every visit, so a new version is seen)."""
    script = await run_in_threadpool(service_worker_script)
    return Response(
        script,
        media_type="text/javascript",
        headers={"Cache-Control": "no-cache", "Service-Worker-Allowed": "/"},
    )


async def level_file(name: str, seen: str | None) -> Response:
    """A level as the page plays it offline (issue 50): ``/levels/NAME.json`` (the web
    manifest) or ``/levels/NAME.f32`` (its float32 weights), built from the shipped level
    (`policies.web_levels`). The digest in the manifest names the weights' version: the
    service worker keeps both; a browser revalidates them with the ETag (``seen``: the
    request's ``If-None-Match``)."""
    from yahtzee_env.policies.web_levels import WEIGHTS_SUFFIX, offline_levels, web_level

    level, dot, suffix = name.rpartition(".")
    if not dot or level not in offline_levels() or "." + suffix not in (".json", WEIGHTS_SUFFIX):
        return JSONResponse(
            {"error": f"no offline level file {name[:40]!r}", "code": "not_found"}, 404
        )
    manifest, blob = await run_in_threadpool(web_level, level)
    etag = f'"{manifest["weights_sha256"][:32]}"'
    headers = {"Cache-Control": "no-cache", "ETag": etag}
    if seen == etag:
        return Response(status_code=304, headers=headers)
    if suffix == "json":
        return JSONResponse(manifest, headers=headers)
    return Response(blob, media_type="application/octet-stream", headers=headers)


def bench_stats(service, since_text: str | None) -> Response:
    """What this process has spent (issue 33; only where `create_app`'s ``bench_stats`` is
    on, for experiments/bench_web.py): its CPU seconds by its own accounting, and the
    storage's counts of round trips, statements and transactions (`storage.Trips`).
    ``since_text``: the benchmark's window, a clock reading (the collector's longest
    pauses since then)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    try:
        since = float(since_text) if since_text is not None else None
    except ValueError:
        return JSONResponse({"error": "since must be a number", "code": "bad_since"}, 400)
    checkpoints = getattr(service.storage, "checkpoints", None)  # SQLite's `Checkpointer`
    held = None
    if checkpoints is not None and since is not None:  # its locked passes in the window
        held = [[ended, spent] for ended, spent in list(checkpoints.held) if ended > since]
    return JSONResponse(
        {
            "checkpoint_holds_since": held,
            "cpu_s": usage.ru_utime + usage.ru_stime,
            "db": service.storage.trips.snapshot(),
            "sockets": service.hub.count(),
            "tables_in_memory": len(service.tables.loaded),
            "gc": service.gc_pauses.snapshot(since),
            "moves": {  # where the changes ran (`locks.TableLocks.run`)
                "inline": service.locks.inline,
                "threaded": service.locks.threaded,
                "busy_db": service.locks.busy_db,
                "inline_s": service.locks.inline_s,
                "inline_max_s": service.locks.inline_max_s,
            },
        }
    )


async def readiness(storage) -> Response:
    """200 if the database answers and its schema is this program's, else 503."""
    try:
        version = await run_in_threadpool(storage.check_version)
    except SchemaError as err:
        return JSONResponse({"ready": False, "error": str(err)}, status_code=503)
    except Exception as err:
        message = f"database {describe_target(storage.target)} unreachable: {err}"
        return JSONResponse({"ready": False, "error": message[:500]}, status_code=503)
    return JSONResponse({"ready": True, "schema_version": version})


__all__ = [
    "STATIC_DIR",
    "bench_stats",
    "languages",
    "level_file",
    "lobby_config",
    "offline_levels",
    "readiness",
    "service_worker",
    "service_worker_script",
]
