"""The browser game: ``yahtzee serve`` (needs the ``web`` extra: starlette, uvicorn).

Four wings, each folder's ``__init__.py`` its map, from the door in: `door` (the app, its
routes and sockets, the server object with one method per intent, the fan-out of states),
`people` (accounts, chat, blocks, reports, ratings, matchmaking), `tables` (the one
authority on every game) and `storage` (every SQL statement and connection: SQLite or
PostgreSQL); `limits` (every limit of the server, read by all of them), `errors`
(``WebError``, what every wing raises, and the checks of a table's code and a player's
name), `names` (what a name may hold) and ``static/`` (the page: plain HTML/CSS and native
ES modules, no build step).
"""

INSTALL_HINT = "the web game needs the 'web' extra: pip install 'yahtzee-rl[web]'"


def create_app(db_path):
    """The ASGI app (imports Starlette lazily, with an install hint if it is missing)."""
    try:
        from yahtzee_env.web.door.app import create_app as _create
    except ModuleNotFoundError as err:
        if err.name and err.name.split(".")[0] in ("starlette", "uvicorn"):
            raise ModuleNotFoundError(INSTALL_HINT) from None
        raise
    return _create(db_path)
