"""E-mail (issue 62): an account's address confirmed by a one-time link, "your turn" and
invitation mails sent through the SMTP server of ``--smtp`` (here one the test starts on
loopback, `aiosmtpd`), at most once per game per few hours, a one-click unsubscribe. The
``test_attack_*`` tests attack each defence as one who read the code would
(docs/security.md)."""

from __future__ import annotations

import re
import socket
import threading
import time
from email import message_from_bytes, policy

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("httpx", reason="TestClient needs httpx")
pytest.importorskip("aiosmtpd", reason="needs aiosmtpd (dev extra)")

from aiosmtpd.controller import Controller
from starlette.testclient import TestClient
from visitors import PASSWORD, account

from yahtzee_env.web.door.app import create_app
from yahtzee_env.web.door.postman import parse_smtp
from yahtzee_env.web.limits import Limits

SITE = "https://yatzy.example"


class Inbox:
    """aiosmtpd's handler: every message it receives, parsed."""

    def __init__(self) -> None:
        self.messages: list = []
        self.arrived = threading.Condition()

    async def handle_DATA(self, server, session, envelope):
        with self.arrived:
            self.messages.append(message_from_bytes(envelope.content, policy=policy.default))
            self.arrived.notify_all()
        return "250 OK"

    def wait(self, n: int, timeout: float = 10.0) -> list:
        """The messages once ``n`` have arrived (the postman's thread sends them)."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.messages) >= n, timeout)
        return list(self.messages)

    def to(self, address: str) -> list:
        return [m for m in self.messages if m["To"] == address]


def local_smtp():
    """A local SMTP server on loopback (aiosmtpd, in a thread): the server, its URL, its
    inbox."""
    inbox = Inbox()
    with socket.socket() as probe:  # a free port (aiosmtpd's ready check cannot take 0)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = Controller(inbox, hostname="127.0.0.1", port=port)
    server.start()
    return server, f"smtp://127.0.0.1:{port}", inbox


@pytest.fixture
def smtp():
    """A local SMTP server on loopback: ``(url, inbox)``."""
    server, url, inbox = local_smtp()
    try:
        yield url, inbox
    finally:
        server.stop()


def mail_app(db, clock, url, **limits):
    return create_app(db, clock=clock, smtp=url, site_url=SITE, limits=Limits(**limits))


def link_in(msg, path: str) -> str:
    body = msg.get_content()
    return re.search(re.escape(SITE + path) + r"\S+", body).group(0)[len(SITE) :]


def confirmed(client, inbox, address: str, lang="en") -> None:
    """Set ``address`` and follow its confirmation link."""
    before = len(inbox.messages)
    reply = client.post("/api/email", json={"address": address, "lang": lang})
    assert reply.status_code == 200, reply.text
    assert reply.json()["confirmed"] is False
    msg = inbox.wait(before + 1)[-1]
    assert msg["To"] == address
    link = link_in(msg, "/email/confirm")
    assert client.get(link).status_code == 200  # the page: a button, nothing confirmed yet
    assert client.get("/api/email").json()["confirmed"] is False
    reply = client.post(link, headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert reply.status_code == 200 and 'data-testid="email-link-title"' in reply.text
    assert client.get("/api/email").json()["confirmed"] is True


def move_of(state):
    return (
        {"type": "roll", "hold": []}
        if state.get("cup")
        else {"type": "score", "box": next(iter(state["options"]))}
    )


def pass_turn(client, code, seat, token):
    """Seat ``seat`` plays its turn: roll, then score the first box offered."""
    state = client.get(f"/api/tables/{code}").json()
    for _ in range(2):
        body = {"seat": seat, "action": move_of(state)}
        body.update(seq=state["seq"], game=state["game"])
        reply = client.post(f"/api/tables/{code}/act", json=body)
        assert reply.status_code == 200, reply.text
        state = reply.json()
    return state


def two_player_table(host, guest):
    """An online table of ``host`` and ``guest`` (both accounts: their sessions' seats, no
    tokens), started: its code and each one's (seat, token)."""
    made = host.post("/api/tables", json={"seats": ["human", "friend"], "online": True}).json()
    code = made["code"]
    joined = guest.post(f"/api/tables/{code}/join", json={}).json()
    assert host.post(f"/api/tables/{code}/start", json={"seat": 0}).status_code == 200
    return code, (0, None), (joined["seat"], None)


def test_the_smtp_url_parts():
    assert parse_smtp("smtp://me:p%40ss@mail.example:587")["password"] == "p@ss"
    tls = parse_smtp("smtps://mail.example?from=game@yatzy.example")
    assert tls["port"] == 465 and tls["tls"] and tls["sender"] == "game@yatzy.example"
    with pytest.raises(ValueError):
        parse_smtp("http://mail.example")


@pytest.mark.backends("sqlite")
def test_without_smtp_the_page_says_so_and_nothing_is_queued(app):
    with TestClient(app):
        ann = account(app, "ann")
        assert ann.get("/api/email").json() == {"available": False}
        reply = ann.post("/api/email", json={"address": "ann@example.com"})
        assert reply.status_code == 503 and reply.json()["code"] == "no_smtp"
        assert app.state.service.postman is None
        guest = TestClient(app)
        guest.post("/api/session", json={"name": "Guest"})
        assert guest.get("/api/email").json() == {"available": False}


def test_the_invitation_and_your_turn_mails_arrive_once_each(db, clock, smtp):
    url, inbox = smtp
    app = mail_app(db, clock, url)
    with TestClient(app):
        ann, bob = account(app, "ann"), account(app, "bob")
        confirmed(ann, inbox, "ann@example.com")
        confirmed(bob, inbox, "bob@example.com", lang="it")
        for a, b in ((ann, "bob"), (bob, "ann")):
            assert a.post("/api/friends/follow", json={"name": b}).status_code == 200
        body = {"seats": ["human", "friend"], "online": True}
        made = ann.post("/api/tables", json=body).json()
        code = made["code"]
        for _ in range(2):  # invited twice: one mail
            reply = ann.post("/api/friends/invite", json={"code": code, "name": "bob"})
            assert reply.status_code == 200, reply.text
        invite = inbox.wait(3)[-1]
        assert invite["To"] == "bob@example.com" and "ann" in invite["Subject"]
        assert "ti invita" in invite["Subject"]  # bob's language: Italian
        assert invite["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        assert invite["List-Unsubscribe"].startswith(f"<{SITE}/email/unsubscribe?u=")
        joined = bob.post(f"/api/tables/{code}/join", json={}).json()
        s0, t0, s1, t1 = 0, None, joined["seat"], None  # the sessions' seats: no tokens
        before = len(inbox.wait(3))  # counted before the start: its mail may arrive at once
        assert ann.post(f"/api/tables/{code}/start", json={"seat": 0}).json()["started"]
        # ann's turn first: ann has no socket open at the table either, so one mail to ann
        pass_turn(ann, code, s0, t0)  # bob's turn: one mail to bob
        pass_turn(bob, code, s1, t1)  # ann's turn: none (ann had hers this game)
        pass_turn(ann, code, s0, t0)  # bob's turn again: none (one per game per 3 hours)
        inbox.wait(before + 2)
        app.state.service.postman.close()  # every job queued has gone
        turns = inbox.messages[before:]
        assert sorted(m["To"] for m in turns) == ["ann@example.com", "bob@example.com"]
        bobs = next(m for m in turns if m["To"] == "bob@example.com")
        assert code in bobs["Subject"] and "Tocca a te" in bobs["Subject"]
        assert f"{SITE}/t/{code}" in bobs.get_content()
        assert len(inbox.to("bob@example.com")) == 3  # the confirmation, invitation, 1 turn


@pytest.mark.backends("sqlite")
def test_no_your_turn_mail_to_a_player_with_the_table_open(db, clock, smtp):
    """The turn passes to a player whose tab has the table open (a socket, proved by its
    session's ``hello``): the page tells them; no mail goes."""
    url, inbox = smtp
    app = mail_app(db, clock, url)
    with TestClient(app):
        ann, bob = account(app, "ann"), account(app, "bob")
        confirmed(bob, inbox, "bob@example.com")
        code, (s0, _), _ = two_player_table(ann, bob)
        with bob.websocket_connect(f"/ws/{code}") as ws:
            ws.send_json({"type": "hello", "id": 1})
            while ws.receive_json()["type"] != "hello":
                pass
            pass_turn(ann, code, s0, None)  # bob's turn, bob at the table
        app.state.service.postman.close()
        assert len(inbox.to("bob@example.com")) == 1  # the confirmation only


@pytest.mark.backends("sqlite")
def test_one_click_unsubscribe_works_without_a_session_and_export_and_delete(db, clock, smtp):
    url, inbox = smtp
    app = mail_app(db, clock, url)
    with TestClient(app):
        ann = account(app, "ann")
        confirmed(ann, inbox, "ann@example.com")
        row = app.state.service.storage.mail.of(ann.get("/api/session").json()["player"]["id"])
        job = app.state.service.mail.with_unsubscribe
        msg = job(
            app.state.service.mail.message("ann@example.com", "en", "s", ["x"]),
            ann.get("/api/session").json()["player"]["id"],
            row,
        )
        link = msg["List-Unsubscribe"].strip("<>")[len(SITE) :]
        stranger = TestClient(app)  # a mail client's one-click POST: no cookie, no Origin
        reply = stranger.post(
            link,
            content=b"List-Unsubscribe=One-Click",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert reply.status_code == 200, reply.text
        seen = ann.get("/api/email").json()
        assert seen["turns"] is False and seen["invites"] is False
        assert ann.post("/api/email/choices", json={"turns": True, "invites": False}).json()[
            "turns"
        ]
        export = ann.get("/api/account/export").json()
        assert export["email"]["address"] == "ann@example.com"
        assert "unsubscribe" not in export["email"]
        reply = ann.post("/api/account/delete", json={"password": PASSWORD})
        assert reply.status_code == 200, reply.text
        pid = export["player"]["id"]
        assert app.state.service.storage.mail.of(pid) is None


@pytest.mark.backends("sqlite")
def test_attack_mail_bombing_a_strangers_address_is_capped(db, clock, smtp):
    """Accounts that set a stranger's address again and again send it at most
    ``confirmations_per_address`` confirmations a day, whoever asks; one account's own
    changes are held to its bucket too."""
    url, inbox = smtp
    app = mail_app(db, clock, url, confirmations_per_address=3, email_set_burst=50)
    with TestClient(app):
        attackers = [account(app, f"mallory{i}") for i in range(3)]
        codes = []
        for i in range(6):
            reply = attackers[i % 3].post("/api/email", json={"address": "Victim@Example.com"})
            codes.append(reply.json().get("code") if reply.status_code != 200 else "ok")
        reply = attackers[0].post("/api/email/resend", json={})
        codes.append(reply.json().get("code"))
        assert codes == ["ok"] * 3 + ["email_cap"] * 4
        app.state.service.postman.close()
        assert len(inbox.wait(3)) == 3
        clock.now += 86_401  # the next day: again
        assert (
            attackers[1].post("/api/email", json={"address": "victim@example.com"}).status_code
            == 200
        )
    app = mail_app(db, clock, url, email_set_burst=2)
    with TestClient(app):
        eve = account(app, "eve")
        statuses = [
            eve.post("/api/email", json={"address": f"e{i}@example.com"}).status_code
            for i in range(3)
        ]
        assert statuses == [200, 200, 429]


@pytest.mark.backends("sqlite")
def test_attack_forged_expired_or_reused_links_are_refused(db, clock, smtp):
    url, inbox = smtp
    app = mail_app(db, clock, url)
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    with TestClient(app):
        ann = account(app, "ann")
        ann.post("/api/email", json={"address": "ann@example.com"})
        link = link_in(inbox.wait(1)[-1], "/email/confirm")
        forged = link.replace("?t=", "?t=AAAA", 1)
        assert ann.post(forged, headers=form).status_code == 400
        clock.now += Limits().confirm_ttl_s + 1  # expired
        assert ann.post(link, headers=form).status_code == 400
        assert ann.get("/api/email").json()["confirmed"] is False
        ann.post("/api/email/resend", json={})
        link = link_in(inbox.wait(2)[-1], "/email/confirm")
        assert ann.post(link, headers=form).status_code == 200
        assert ann.post(link, headers=form).status_code == 400  # used once already
        pid = ann.get("/api/session").json()["player"]["id"]
        key = app.state.service.storage.mail.of(pid)["unsubscribe"]
        stranger = TestClient(app)
        for u, k in ((pid, "x" * 32), (pid + 1, key), ("1; DROP", key)):
            reply = stranger.post(f"/email/unsubscribe?u={u}&k={k}", headers=form)
            assert reply.status_code == 400
        assert ann.get("/api/email").json()["turns"] is True
        ann.post("/api/email", json={"address": "ann2@example.com"})  # a new address: new key
        reply = stranger.post(f"/email/unsubscribe?u={pid}&k={key}", headers=form)
        assert reply.status_code == 400


@pytest.mark.backends("sqlite")
def test_attack_another_account_cannot_read_or_change_your_address(db, clock, smtp):
    url, inbox = smtp
    app = mail_app(db, clock, url)
    with TestClient(app):
        ann, bob = account(app, "ann"), account(app, "bob")
        confirmed(ann, inbox, "ann@example.com")
        assert bob.get("/api/email").json()["address"] is None  # bob's own, never ann's
        bob.post("/api/email/remove", json={})
        bob.post("/api/email/choices", json={"turns": False, "invites": False})
        assert ann.get("/api/email").json() == {
            "available": True,
            "address": "ann@example.com",
            "confirmed": True,
            "turns": True,
            "invites": True,
        }
        # nowhere else: not in the friends' view, not in a profile
        bob.post("/api/friends/follow", json={"name": "ann"})
        assert "ann@example.com" not in bob.get("/api/friends").text
        assert "ann@example.com" not in bob.get("/api/profiles/ann").text


@pytest.mark.backends("sqlite")
def test_attack_header_injection_in_the_address_is_refused(db, clock, smtp):
    url, inbox = smtp
    app = mail_app(db, clock, url, email_set_burst=50)
    with TestClient(app):
        ann = account(app, "ann")
        for bad in (
            "ann@example.com\r\nBcc: victim@example.com",
            "ann@example.com\nSubject: hi",
            "a b@example.com",
            "ann@example.com, victim@example.com",
            "<ann@example.com>",
            "x" * 250 + "@example.com",
            ["ann@example.com"],
            "ann@localhost",
        ):
            reply = ann.post("/api/email", json={"address": bad})
            assert reply.status_code == 400 and reply.json()["code"] == "bad_email", bad
        assert ann.get("/api/email").json()["address"] is None
        assert inbox.messages == []


class DeadServer:
    """A TCP server that accepts connections and never answers (a dead SMTP server)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self.accept, daemon=True)
        self.thread.start()

    def accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.mark.backends("sqlite")
def test_attack_a_dead_smtp_server_does_not_slow_moves(db, clock):
    """A server that takes the connection and never answers: the moves' replies come at
    their pace (each turn's mail would cost the timeout, were it sent on the move's path);
    the postman's thread waits out its timeout; past the queue's bound mails are dropped
    (and logged), never waited for."""
    dead = DeadServer()
    try:
        app = create_app(
            db,
            clock=clock,
            smtp=f"smtp://127.0.0.1:{dead.port}",
            site_url=SITE,
            limits=Limits(smtp_timeout_s=1.0, mail_queue=2),
        )
        service = app.state.service
        with TestClient(app):
            ann, bob = account(app, "ann"), account(app, "bob")
            for c, address in ((ann, "ann@example.com"), (bob, "bob@example.com")):
                pid = c.get("/api/session").json()["player"]["id"]
                msg = service.mail.set_address(pid, {"address": address})  # (no mail sent)
                token = re.search(r"confirm\?t=([\w-]+)", msg.get_content()).group(1)
                assert service.mail.confirm(token)
            code, (s0, t0), (s1, t1) = two_player_table(ann, bob)
            started = time.monotonic()
            for _ in range(3):  # six turns, each one's mail due (the clock moves 3 hours)
                pass_turn(ann, code, s0, t0)
                pass_turn(bob, code, s1, t1)
                clock.now += Limits().mail_every_s + 1
            took = time.monotonic() - started
            assert took < 1.5, took  # 12 moves, while the postman is stuck on a dead server
            assert service.postman.dropped >= 1  # the queue holds 2: the others dropped
        time.sleep(1.2)  # (the stuck connection times out: the thread goes on)
        assert service.postman.failed >= 1
    finally:
        dead.close()
