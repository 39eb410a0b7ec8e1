"""The routes added last (issue 62: friends and invitations, tournaments, profiles, e-mail
and its links, the time bank), attacked as one who read the code would (docs/security.md):
another site's requests, replays of the same intent, a stranger who would lock someone out
or make the server hold without bound, and the sweeps that must never delete what a player
may come back to. What an older test attacks already is named in docs/security.md, not
attacked again here."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("httpx", reason="TestClient needs httpx")

from starlette.testclient import TestClient
from test_tournaments import CPU, create, play_round
from visitors import account, read

from yahtzee_env.web.door.app import create_app
from yahtzee_env.web.limits import Limits

EVIL = "https://evil.example"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}  # the links' pages
BANK = {"add": 21, "cap": 123}  # a time bank (issue 62): a table's own choice


def befriend(a: TestClient, b: TestClient, a_name: str, b_name: str) -> None:
    """``a`` and ``b`` follow each other: friends."""
    assert a.post("/api/friends/follow", json={"name": b_name}).status_code == 200
    assert b.post("/api/friends/follow", json={"name": a_name}).status_code == 200


def online_table(host: TestClient, friends_only: bool = False) -> str:
    """An online table of two seats, one free, hosted by ``host``."""
    code = host.post("/api/tables", json={"seats": ["human", "friend"], "online": True})
    code = code.json()["code"]
    if friends_only:
        reply = host.post(f"/api/tables/{code}/friends-only", json={"on": True})
        assert reply.status_code == 200, reply.text
    return code


# ------------------------------------------------------------------ another site's requests
@pytest.mark.backends("sqlite")
def test_attack_another_sites_page_cannot_use_the_new_routes(app):
    """Every state-changing route of issue 62 is refused from another Origin (403) or as a
    form a page could send without asking (415), like the older routes, and nothing
    changes; only the mails' two links take a form, their token the proof
    (`test_email.py::test_attack_forged_expired_or_reused_links_are_refused`)."""
    with TestClient(app):
        ann, bob = account(app, "ann"), account(app, "bob")
        befriend(ann, bob, "ann", "bob")
        table = online_table(ann)
        ann.post("/api/friends/invite", json={"code": table, "name": "bob"})
        tourney = create(ann, places=4, fill=None).json()["code"]
        routes = {
            "/api/friends/follow": {"name": "bob"},
            "/api/friends/unfollow": {"name": "bob"},
            "/api/friends/invite": {"code": table, "name": "bob"},
            "/api/friends/accept": {"code": table},
            "/api/friends/decline": {"code": table},
            f"/api/tables/{table}/friends-only": {"on": True},
            "/api/tournaments": {"name": "Evil cup", "places": 4, "fill": CPU},
            f"/api/tournaments/{tourney}/join": {},
            f"/api/tournaments/{tourney}/start": {},
            "/api/email": {"address": "eve@example.com"},
            "/api/email/resend": {},
            "/api/email/choices": {"turns": False, "invites": False},
            "/api/email/remove": {},
            "/api/account/profile": {"visibility": "nobody"},
            "/api/tables": {
                "seats": ["human", "friend"],
                "online": True,
                "time_bank": {"add": 21, "cap": 123},
            },
        }
        for who in (ann, bob):
            for path, body in routes.items():
                reply = who.post(path, json=body, headers={"Origin": EVIL})
                assert reply.status_code == 403, (path, reply.text)
                assert reply.json()["code"] == "cross_site"
                reply = who.post(path, json=body, headers={"Sec-Fetch-Site": "cross-site"})
                assert reply.status_code == 403, (path, reply.text)
                reply = who.post(path, content=b"name=bob", headers={"Content-Type": "text/plain"})
                assert reply.status_code == 415, (path, reply.text)
        storage = app.state.service.storage
        a, b = (storage.accounts.account(username=n)["player_id"] for n in ("ann", "bob"))
        assert storage.friends.are_friends(a, b)
        assert [i["code"] for i in bob.get("/api/friends").json()["invites"]] == [table]
        assert [e["name"] for e in storage.tournaments.entrants(tourney)] == ["Ann"]
        assert read(ann, f"/api/tournaments/{tourney}")["state"] == "open"
        assert ann.get(f"/api/tables/{table}/friends-only").json()["friends_only"] is False
        assert read(bob, "/api/profiles/ann")["name"] == "ann"  # still public


# ------------------------------------------------------------------ replays
def test_attack_a_replayed_accept_follow_or_start_acts_once(app):
    """The same intent sent again changes nothing more: an invitation accepted twice seats
    its guest once (and a second join is refused), a follow sent twice is one follow, a
    tournament started twice draws its bracket once. (Joining a tournament twice:
    `test_tournaments.py::test_attack_tournaments_need_an_account_and_a_place_is_taken_once`;
    a confirmation link used twice:
    `test_email.py::test_attack_forged_expired_or_reused_links_are_refused`.)"""
    with TestClient(app):
        ann, bob = account(app, "ann"), account(app, "bob")
        befriend(ann, bob, "ann", "bob")
        assert bob.post("/api/friends/follow", json={"name": "ann"}).status_code == 200
        storage = app.state.service.storage
        a, b = (storage.accounts.account(username=n)["player_id"] for n in ("ann", "bob"))
        assert [f["username"] for f in storage.friends.friends_of(b)] == ["ann"]
        table = online_table(ann, friends_only=True)
        assert (
            ann.post("/api/friends/invite", json={"code": table, "name": "bob"}).status_code == 200
        )
        for _ in range(2):
            reply = bob.post("/api/friends/accept", json={"code": table})
            assert reply.status_code == 200 and reply.json() == {"code": table, "accepted": True}
        assert bob.post(f"/api/tables/{table}/join", json={}).status_code == 200
        assert bob.post(f"/api/tables/{table}/join", json={}).status_code in (403, 409)
        assert sorted(storage.tables.seat_owners(table)) == sorted([a, b])
        assert bob.get("/api/friends").json()["invites"] == []  # answered: no notice again
        tourney = create(ann, places=4, fill=CPU, start_in=None).json()["code"]
        assert ann.post(f"/api/tournaments/{tourney}/start", json={}).status_code == 200
        drawn = storage.tournaments.matches(tourney)
        reply = ann.post(f"/api/tournaments/{tourney}/start", json={})
        assert reply.status_code == 409 and reply.json()["code"] == "tourney_started"
        assert storage.tournaments.matches(tourney) == drawn


@pytest.mark.backends("sqlite")
def test_attack_replayed_mail_links_act_once(db, clock):
    """An unsubscribe link sent twice unsubscribes once (the second says so too), and once
    its owner turns mails back on the old link (every mail before carried it) no longer
    turns them off; a confirmation link of an address changed since confirms nothing."""
    mails = pytest.importorskip("test_email")  # (its SMTP server: aiosmtpd)
    server, url, inbox = mails.local_smtp()
    app = mails.mail_app(db, clock, url)
    try:
        with TestClient(app):
            ann = account(app, "ann")
            mails.confirmed(ann, inbox, "ann@example.com")
            pid = ann.get("/api/session").json()["player"]["id"]
            old = app.state.service.storage.mail.of(pid)["unsubscribe"]
            stranger = TestClient(app)  # the link needs no session: any holder of a mail
            link = f"/email/unsubscribe?u={pid}&k={old}"
            for _ in range(2):
                assert stranger.post(link, headers=FORM).status_code == 200
            assert read(ann, "/api/email")["turns"] is False
            reply = ann.post("/api/email/choices", json={"turns": True, "invites": True})
            assert reply.status_code == 200, reply.text
            assert stranger.post(link, headers=FORM).status_code == 400  # replayed: refused
            assert read(ann, "/api/email")["turns"] is True
            new = app.state.service.storage.mail.of(pid)["unsubscribe"]
            assert new != old
            reply = stranger.post(f"/email/unsubscribe?u={pid}&k={new}", headers=FORM)
            assert reply.status_code == 200
            # a confirmation link, then a new address before it was followed
            before = len(inbox.messages)
            ann.post("/api/email", json={"address": "ann.b@example.com"})
            first = mails.link_in(inbox.wait(before + 1)[-1], "/email/confirm")
            ann.post("/api/email", json={"address": "eve@example.com"})
            inbox.wait(before + 2)
            assert ann.post(first, headers=FORM).status_code == 400
            assert read(ann, "/api/email") | {"turns": None, "invites": None} == {
                "available": True,
                "address": "eve@example.com",
                "confirmed": False,
                "turns": None,
                "invites": None,
            }
    finally:
        server.stop()


# ------------------------------------------------------------------ locking someone out
@pytest.mark.backends("sqlite")
def test_attack_a_blocked_friends_invitations_cannot_fill_the_invitees_cap(tmp_path):
    """One account holds at most `Limits.invites_per_invitee` invitations: a friend who
    fills that and is then blocked (or whose invitations were accepted, or whose tables
    ended) must not keep the invitee's other friends from inviting them for the
    invitations' hour, invitations the invitee can no longer see nor decline."""
    limits = Limits(invites_per_invitee=2, invite_burst=10)
    app = create_app(tmp_path / "web.sqlite3", limits=limits)
    with TestClient(app):
        ann, eve, bob = account(app, "ann"), account(app, "eve"), account(app, "bob")
        befriend(ann, eve, "ann", "eve")
        befriend(ann, bob, "ann", "bob")
        for code in (online_table(eve), online_table(eve)):
            reply = eve.post("/api/friends/invite", json={"code": code, "name": "ann"})
            assert reply.status_code == 200, reply.text
        storage = app.state.service.storage
        a, e = (storage.accounts.account(username=n)["player_id"] for n in ("ann", "eve"))
        storage.people.block(a, e)  # ann blocks eve (the table's Block button)
        assert ann.get("/api/friends").json()["invites"] == []  # hidden: nothing to decline
        mine = online_table(bob)
        reply = bob.post("/api/friends/invite", json={"code": mine, "name": "ann"})
        assert reply.status_code == 200, reply.text
        # an accepted invitation is answered: it no longer counts against the cap either
        assert ann.post("/api/friends/accept", json={"code": mine}).status_code == 200
        other = online_table(bob)
        reply = bob.post("/api/friends/invite", json={"code": other, "name": "ann"})
        assert reply.status_code == 200, reply.text
        assert [i["code"] for i in ann.get("/api/friends").json()["invites"]] == [other]


# ------------------------------------------------------------------ the sweeps
def quiet_app(db, clock):
    """The app on the test's clock with its background clock and sweep idle (a server down
    a day, or whose clock task stalls: the test runs the sweep itself)."""
    return create_app(db, clock=clock, limits=Limits(clock_every_s=3600.0, sweep_every_s=3600.0))


def test_attack_the_sweep_keeps_an_unfinished_tournaments_tables(db, clock):
    """A match's table of a running tournament stays through every sweep, however long
    it idles (its turns unplayed while the server was down): the tournament reads its
    result from it, and its players come back to it. Deleted, the tournament would wait
    on it for ever."""
    app = quiet_app(db, clock)
    with TestClient(app) as c:
        ann, bob = account(app, "ann"), account(app, "bob")
        code = create(ann, places=4, fill=CPU, start_in=None).json()["code"]
        assert bob.post(f"/api/tournaments/{code}/join", json={}).status_code == 200
        assert ann.post(f"/api/tournaments/{code}/start", json={}).status_code == 200
        bracket = read(ann, f"/api/tournaments/{code}")
        tables = [m["table"] for m in bracket["rounds"][0]["matches"] if m["table"]]
        assert tables
        clock.now += 40 * 86_400  # past every table age (`Limits.expire_*`)
        expired = c.portal.call(app.state.service.sweep)
        assert not set(tables) & set(expired), expired
        for table in tables:
            assert read(ann, f"/api/tables/{table}")["over"] is False
        while bracket["state"] != "over":  # the players come back: it plays to its winner
            bracket = play_round(code, [ann, bob], ann)
        assert bracket["winner"] is not None


def test_attack_the_sweeps_keep_a_finished_tournaments_winner_and_results(db, clock):
    """A finished tournament's bracket, results and winner stay after its tables expired
    and the week's sweep ran, on the bracket and on the winner's profile."""
    app = quiet_app(db, clock)
    with TestClient(app) as c:
        ann, bob = account(app, "ann"), account(app, "bob")
        code = create(ann, places=4, fill=CPU, start_in=None).json()["code"]
        bob.post(f"/api/tournaments/{code}/join", json={})
        ann.post(f"/api/tournaments/{code}/start", json={})
        bracket = read(ann, f"/api/tournaments/{code}")
        while bracket["state"] != "over":
            bracket = play_round(code, [ann, bob], ann)
        clock.now += 60 * 86_400
        c.portal.call(app.state.service.sweep)
        app.state.service.tourneys.tournaments.sweep()
        after = read(ann, f"/api/tournaments/{code}")
        assert after["state"] == "over" and after["winner"] == bracket["winner"]
        assert after["rounds"] == bracket["rounds"]
        won = {n: read(ann, f"/api/profiles/{n}")["tournaments_won"] for n in ("ann", "bob")}
        assert sum(won.values()) == (bracket["winner"] in ("Ann", "Bob"))


def test_attack_the_weeks_sweep_never_closes_a_full_tournament(db, clock):
    """A tournament that waits to fill closes after `UNFILLED_S` with no winner; one whose
    places were all taken (its last join racing the sweep, its start not yet taken by the
    server's step) is not waiting: the sweep leaves it, and it starts."""
    from yahtzee_env.web.people.tournaments import UNFILLED_S

    app = create_app(db, clock=clock, limits=Limits(tournament_every_s=3600.0))
    with TestClient(app):
        ann = account(app, "ann")
        code = create(ann, places=4, fill=None, start_in=None).json()["code"]
        store = app.state.service.storage.tournaments
        for name in ("bob", "cyd", "dee"):  # (the store's join: no step of the server's)
            player = account(app, name).get("/api/session").json()["player"]
            assert store.join(code, player["id"], player["name"]) is None
        clock.now += UNFILLED_S + 1
        assert store.close_unfilled(clock.now - UNFILLED_S) == 0
        app.state.service.tourneys.tournaments.advance_due()
        assert read(ann, f"/api/tournaments/{code}")["state"] == "running"
