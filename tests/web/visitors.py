"""The API tests' visitors, in one place: a browser signed up to a new account (`account`,
`sign_up`: a Starlette TestClient or an httpx client alike), a guest (`guest`), and requests
that wait out the asker's token bucket as a person would (`send`, `read`)."""

from __future__ import annotations

import time

PASSWORD = "correct horse battery"


def sign_up(client, username: str, name: str | None = None) -> dict:
    """Sign ``client`` (a TestClient, or an httpx client of a served page) up to a new
    account ``username``, its session named ``name`` (``username.title()`` unless given):
    the sign-up's reply."""
    assert client.post("/api/session", json={"name": name or username.title()}).status_code == 200
    reply = client.post("/api/account/signup", json={"username": username, "password": PASSWORD})
    assert reply.status_code == 200, reply.text
    return reply.json()


def guest(app, name: str):
    """A second browser on ``app``'s server: its own cookies, a guest session ``name``."""
    from starlette.testclient import TestClient

    client = TestClient(app)
    assert client.post("/api/session", json={"name": name}).status_code == 200
    return client


def account(app, username: str, name: str | None = None):
    """A browser on ``app``'s server signed in to a new account ``username``."""
    from starlette.testclient import TestClient

    client = TestClient(app)
    sign_up(client, username, name)
    return client


def served_account(url: str, username: str, name: str | None = None):
    """An httpx client of the server at ``url`` (sent with its Origin, as the page's own
    requests are) signed up to a new account ``username``."""
    import httpx

    client = httpx.Client(base_url=url, headers={"Origin": url}, timeout=30)
    sign_up(client, username, name)
    return client


def send(client, path: str, body: dict):
    """POST ``body``, waiting out the player's token bucket (429) as a person would."""
    reply = client.post(path, json=body)
    while reply.status_code == 429:
        time.sleep(0.1)
        reply = client.post(path, json=body)
    return reply


def send_seed(client, code: str, seat: int, token, seed):
    """Seat ``seat``'s client seed for table ``code``, sent as a page would (`send`)."""
    body = {"seat": seat, "token": token, "client_seed": seed}
    return send(client, f"/api/tables/{code}/client-seed", body)


def read(client, path: str) -> dict:
    """GET ``path``'s JSON, waiting out the asker's token bucket."""
    reply = client.get(path)
    while reply.status_code == 429:
        time.sleep(0.1)
        reply = client.get(path)
    assert reply.status_code == 200, reply.text
    return reply.json()
