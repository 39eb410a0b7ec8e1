"""The browser game: ``yahtzee serve`` (needs the ``web`` extra: starlette, uvicorn).

Modules, from the door in: `app` (``create_app``: builds the server object, lists the
routes), `service` (the server object: tables, storage, accounts, sockets, locks, limits,
and one handler per intent), `routes` (the HTTP routes), `sockets` (a table's WebSocket),
`fanout` (states to the sockets, other processes' changes too), `guard` (security headers,
cross-site checks, per-address limits), `limits` (every limit, token buckets, socket
slots), `hub` (the open sockets: a bounded send queue each), `locks` (one lock per table),
`tables` (the game loop: seats, turns, CPU moves, coach, replay), `deal` (a table's games
from its seed), `review` (a finished game graded by the solver), `accounts` (sessions,
sign-up, sign-in), `stats` (my statistics), `storage` (SQLite or PostgreSQL, versioned
schema), `server` (uvicorn as ``yahtzee serve`` runs it: timeouts against slow clients),
`local_server` and `local_postgres` (``yahtzee serve`` and a PostgreSQL cluster as loopback
child processes, for tests and benchmarks); a place to play (issue 32): `matchmaking` (the
quick-match queue), `ratings` (openskill's Plackett-Luce), `spectators` and `watch` (a
read-only link and its socket), `play` (their routes); and ``static/`` (the page: plain HTML/CSS and
native ES modules, no build step).
"""

INSTALL_HINT = "the web game needs the 'web' extra: pip install 'yahtzee-rl[web]'"


def create_app(db_path):
    """The ASGI app (imports Starlette lazily, with an install hint if it is missing)."""
    try:
        from yahtzee_env.web.app import create_app as _create
    except ModuleNotFoundError as err:
        if err.name and err.name.split(".")[0] in ("starlette", "uvicorn"):
            raise ModuleNotFoundError(INSTALL_HINT) from None
        raise
    return _create(db_path)
