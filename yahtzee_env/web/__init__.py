"""The browser game: ``yahtzee serve`` (needs the ``web`` extra: starlette, uvicorn).

Modules: `tables` (the game loop: seats, turns, CPU moves, coach, replay), `storage`
(SQLite, versioned schema), `stats` (my statistics), `app` (routes and WebSockets), `hub`
(the open sockets: a bounded send queue each), `guard` (security headers, cross-site
checks, per-address limits), `limits` (every limit, token buckets, socket slots), `server`
(uvicorn as ``yahtzee serve`` runs it: timeouts against slow clients), `local_server`
(``yahtzee serve`` as a loopback child process, for tests and benchmarks), and ``static/``
(the page: plain HTML/CSS/JS, no build step).
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
