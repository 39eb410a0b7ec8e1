"""The web tests' fixtures, in one place.

- ``db``: a database of each storage backend, a SQLite file and a fresh PostgreSQL database
  (the session's private server, ``pg_url``): every test that asks for it runs on both, but
  those marked ``@pytest.mark.backends("sqlite")`` (about SQLite itself, or the front door,
  which no storage touches).
- ``app`` and ``client``: the app over ``db`` and Starlette's TestClient of it (started, so
  its background tasks run); on the test's ``clock`` (a wall clock the test moves) when the
  test asks for one.
- ``new_table``, ``act`` and ``play_out``: the calls nearly every test makes (a table over
  the API, a move stamped with the state it was made from, a seat played to the game's end).
- The browser: ``browser`` (a headless Chromium per module, Debian's ``chromium`` driven by
  Playwright; the tests that need it skip where either is missing, as ``.ci/run`` installs
  both), ``page`` (a fresh context, and no page error or CSP refusal allowed),
  ``open_page`` (a factory of pages at a screen size and locale), ``server`` (``yahtzee
  serve`` as a child process on a SQLite file, one per test) and ``shared_server`` (one per
  module).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

BACKENDS = ("sqlite", "postgresql")
CHROMIUM = os.environ.get("YAHTZEE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TIMEOUT_MS = 20_000


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "backends(*names): the storage backends `db` runs on (default: both)"
    )


def pytest_generate_tests(metafunc):
    """``db`` is parametrised here, so that a test's ``backends`` mark chooses its values."""
    if "db" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("backends")
        backends = marker.args if marker else BACKENDS
        assert set(backends) <= set(BACKENDS), backends
        metafunc.parametrize("db", backends, indirect=True)


# ------------------------------------------------------------------ the server in-process
@pytest.fixture
def db(request, tmp_path):
    """A database of the test's backend: a SQLite file, or a new PostgreSQL database's URL."""
    if request.param == "postgresql":
        return request.getfixturevalue("pg_url")
    return tmp_path / "web.sqlite3"


class Clock:
    """A wall clock the test moves forward."""

    def __init__(self, start: float | None = None) -> None:
        self.now = time.time() if start is None else start

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def app(request, db):
    """The app over ``db`` (its server object: ``app.state.service``), on the test's
    ``clock`` if the test uses that fixture."""
    pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
    from yahtzee_env.web.door.app import create_app

    clock = request.getfixturevalue("clock") if "clock" in request.fixturenames else None
    return create_app(db, clock=clock)


@pytest.fixture
def client(app):
    pytest.importorskip("httpx", reason="TestClient needs httpx")
    from starlette.testclient import TestClient

    with TestClient(app) as c:
        yield c


def _new_table(client, seats=("human", "easy"), **extra):
    """A table of ``seats`` (and the lobby's other choices, ``extra``) made over the API:
    its code, the host's seat tokens and its state."""
    reply = client.post("/api/tables", json={"seats": list(seats), **extra})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    return body["code"], body["tokens"], body["state"]


def _act(client, code, seat, token, action, seq=None, game=None, *, state=None):
    """POST an intent, stamped with ``seq``/``game``: those given, else those of ``state``,
    else those of the table now."""
    if seq is None:
        now = state if state is not None else client.get(f"/api/tables/{code}").json()
        seq, game = now.get("seq", 0), now.get("game")
    body = {"seat": seat, "token": token, "action": action, "seq": seq, "game": game}
    for _ in range(5):  # as a player who keeps to the server's pace: a move over the
        # player's budget (429 ``rate_limited``: a game's moves in a burst, its first rolls
        # among them) is made again after the ``retry-after`` it was told, where that is
        # the default budget's second or two (a test of a small budget gets its 429)
        reply = client.post(f"/api/tables/{code}/act", json=body)
        if reply.status_code != 429 or reply.json().get("code") != "rate_limited":
            break
        wait = float(reply.headers.get("retry-after") or 1)
        if wait > 2:
            break
        time.sleep(wait)
    return reply


def _roll_first(client, code, seat, token, state=None):
    """A person's turn starts with the dice in the cup (issue 58, item 2): the seat taps
    Roll when the state says so (``cup``); the state with the first roll down."""
    state = state or client.get(f"/api/tables/{code}").json()
    if not state.get("cup"):
        return state
    assert state["dice"] == [] and state["current"] == seat
    reply = _act(client, code, seat, token, {"type": "roll", "hold": []}, state=state)
    assert reply.status_code == 200, reply.text
    state = reply.json()
    assert not state["cup"] and len(state["dice"]) == 5 and state["rolls_left"] == 2
    return state


def _play_out(client, code, token, seat=0, state=None):
    """Play seat ``seat`` to the end: the first roll (a person's turn starts with the dice
    in the cup), one re-roll keeping die 0, then the best-paying box."""
    state = state or client.get(f"/api/tables/{code}").json()
    while not state["over"]:
        assert state["current"] == seat
        if state.get("cup"):
            reply = _act(client, code, seat, token, {"type": "roll", "hold": []}, state=state)
        elif state["rolls_left"] == 2:
            reply = _act(client, code, seat, token, {"type": "roll", "hold": [0]}, state=state)
        else:
            box = max(state["options"], key=state["options"].get)
            reply = _act(client, code, seat, token, {"type": "score", "box": box}, state=state)
        assert reply.status_code == 200, reply.text
        state = reply.json()
    return state


@pytest.fixture
def new_table():
    """``new_table(client, seats=("human", "easy"), **extra) -> (code, tokens, state)``."""
    return _new_table


@pytest.fixture
def act():
    """``act(client, code, seat, token, action, seq=None, game=None, *, state=None)``: the
    reply to the move."""
    return _act


@pytest.fixture
def roll_first():
    """``roll_first(client, code, seat, token, state=None)``: the state after the seat's
    tap on Roll where its turn starts with the dice in the cup (else the state as it is)."""
    return _roll_first


@pytest.fixture
def play_out():
    """``play_out(client, code, token, seat=0, state=None)``: the state at the game's end."""
    return _play_out


# ------------------------------------------------------------------ the browser
@pytest.fixture(scope="module")  # not longer: Playwright's loop would hold up asyncio.run
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright (dev extra)")
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        pytest.skip(f"no chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        # The page registers a service worker (issue 50) whose cache answers requests that a
        # test routes or counts: contexts block it unless a test allows it
        # (tests/web/test_offline_browser.py).
        new_context = b.new_context
        b.new_context = lambda **kw: new_context(**{"service_workers": "block", **kw})
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 900, "height": 1100})
    pg = context.new_page()
    pg.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    # the strict CSP (issue 17): nothing on the page may need an inline script or handler
    pg.on(
        "console",
        lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None,
    )
    yield pg
    context.close()
    assert not errors, errors


@pytest.fixture
def open_page(browser):
    """``open_page(width, height, touch=False, locale="en-US")``: a page in a fresh context
    (no page errors allowed)."""
    contexts, errors = [], []

    def make(width=900, height=1000, touch=False, locale="en-US", **extra):
        ctx = browser.new_context(
            viewport={"width": width, "height": height}, has_touch=touch, locale=locale, **extra
        )
        contexts.append(ctx)
        pg = ctx.new_page()
        pg.set_default_timeout(TIMEOUT_MS)
        pg.on("pageerror", lambda e: errors.append(str(e)))
        return pg

    yield make
    for ctx in contexts:
        ctx.close()
    assert not errors, errors


def _local_server(path: Path):
    pytest.importorskip("uvicorn", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
    from yahtzee_env.web.door.local_server import LocalServer

    srv = LocalServer(path)
    srv.start()
    return srv


@pytest.fixture
def server(tmp_path):
    """``yahtzee serve`` on a SQLite file of its own."""
    srv = _local_server(tmp_path / "web.sqlite3")
    yield srv
    srv.kill()


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory):
    """``yahtzee serve`` on a SQLite file, for the tests of one module."""
    srv = _local_server(tmp_path_factory.mktemp("web") / "web.sqlite3")
    yield srv
    srv.kill()
