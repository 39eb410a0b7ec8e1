"""Friends and invitations (issue 62) through Starlette's TestClient, on both backends:
following by user name, friends as mutual follows, the lobby's counts, a friend's presence
and open table, invitations (accept, decline) and friends-only tables; blocking wins over
all of it. The ``test_attack_*`` tests attack each defence as one who read the code would
(docs/security.md)."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("httpx", reason="TestClient needs httpx")

from starlette.testclient import TestClient
from visitors import PASSWORD, account

from yahtzee_env.web.limits import Limits


def follow(client, name):
    return client.post("/api/friends/follow", json={"name": name})


def friends_table(client, friends_only=False) -> str:
    """An online table of two seats, one free, hosted by ``client``."""
    body = {"seats": ["human", "friend"], "online": True}
    code = client.post("/api/tables", json=body).json()["code"]
    if friends_only:
        reply = client.post(f"/api/tables/{code}/friends-only", json={"on": True})
        assert reply.status_code == 200, reply.text
    return code


def test_follows_make_friends_only_when_mutual_and_friends_see_presence(app):
    with TestClient(app):
        ann, bob = account(app, "ann"), account(app, "bob")
        reply = follow(ann, "Bob")  # user names compare case-insensitively
        assert reply.json() == {"following": "bob", "friend": False}
        bob.get("/api/friends")  # bob's page asks: bob is online
        seen = ann.get("/api/friends").json()
        assert seen["online"] == 2 and seen["waiting"] == 0
        # a follow alone: the name, never where they are
        assert seen["following"] == [
            {"name": "bob", "friend": False, "online": False, "tables": []}
        ]
        assert follow(bob, "ann").json()["friend"] is True
        code = friends_table(bob)
        seen = ann.get("/api/friends").json()["following"]
        assert seen[0]["friend"] and seen[0]["online"]
        assert seen[0]["tables"] == [{"code": code, "started": False, "free": 1}]
        storage = app.state.service.storage
        a, b = (storage.accounts.account(username=n)["player_id"] for n in ("ann", "bob"))
        assert storage.friends.are_friends(a, b) and storage.friends.are_friends(b, a)
        assert [f["username"] for f in storage.friends.friends_of(a)] == ["bob"]
        assert ann.post("/api/friends/unfollow", json={"name": "bob"}).status_code == 200
        assert not storage.friends.are_friends(a, b)
        assert ann.get("/api/friends").json()["following"] == []


def test_names_are_checked_and_an_unknown_name_says_so(app):
    with TestClient(app):
        ann = account(app, "ann")
        reply = follow(ann, "nobody_here")
        assert reply.status_code == 404 and reply.json()["code"] == "no_such_player"
        assert reply.json()["params"] == {"name": "nobody_here"}
        for bad in ("<b>", "x", "a" * 200, ["ann"], None):
            assert follow(ann, bad).json()["code"] == "bad_username"
        assert follow(ann, "ann").json()["code"] == "follow_self"
        guest = TestClient(app)
        guest.post("/api/session", json={"name": "Guest"})
        reply = follow(guest, "ann")
        assert reply.json()["code"] == "no_account", reply.text
        ann.get("/api/friends")
        counts = guest.get("/api/friends").json()  # a guest sees the counts only
        assert counts["following"] == [] and counts["online"] == 2


def test_an_invitation_is_accepted_and_seats_the_friend(app):
    with TestClient(app):
        ann, bob = account(app, "ann"), account(app, "bob")
        follow(ann, "bob"), follow(bob, "ann")
        code = friends_table(ann, friends_only=True)
        assert ann.get(f"/api/tables/{code}/friends-only").json()["friends_only"] is True
        reply = ann.post("/api/friends/invite", json={"code": code, "name": "bob"})
        assert reply.json() == {"invited": "bob", "code": code}, reply.text
        invites = bob.get("/api/friends").json()["invites"]
        assert [(i["code"], i["from_name"]) for i in invites] == [(code, "ann")]
        assert bob.post("/api/friends/accept", json={"code": code}).json()["accepted"] is True
        assert bob.get("/api/friends").json()["invites"] == []  # answered: no longer shown
        assert bob.post(f"/api/tables/{code}/join", json={}).status_code == 200
        state = ann.post(f"/api/tables/{code}/start", json={"seat": 0}).json()
        assert state["started"]


def test_a_declined_invitation_is_gone(app):
    with TestClient(app):
        ann, bob = account(app, "ann"), account(app, "bob")
        follow(ann, "bob"), follow(bob, "ann")
        code = friends_table(ann)
        ann.post("/api/friends/invite", json={"code": code, "name": "bob"})
        assert bob.post("/api/friends/decline", json={"code": code}).json()["accepted"] is False
        assert bob.get("/api/friends").json()["invites"] == []
        assert bob.post("/api/friends/accept", json={"code": code}).json()["code"] == "no_invite"


def test_the_lobby_counts_the_quick_match_queue(app):
    with TestClient(app):
        ann = account(app, "ann")
        reply = ann.post("/api/quick", json={"seats": 2, "wait": 30})
        assert reply.status_code == 200, reply.text
        assert ann.get("/api/friends").json()["waiting"] == 1


def test_attack_a_stranger_cannot_make_anyone_a_friend_nor_invite_them(app):
    """Following is one-sided: a stranger who follows you sees nothing of you, and only a
    friend (both follow) can invite you."""
    with TestClient(app):
        eve, bob = account(app, "eve"), account(app, "bob")
        follow(eve, "bob")
        bob.get("/api/friends")
        code = friends_table(bob)
        seen = eve.get("/api/friends").json()["following"][0]
        assert not seen["friend"] and not seen["online"] and seen["tables"] == []
        eve_code = friends_table(eve)
        reply = eve.post("/api/friends/invite", json={"code": eve_code, "name": "bob"})
        assert reply.status_code == 403 and reply.json()["code"] == "not_friends"
        assert bob.get("/api/friends").json()["invites"] == []
        # nor invite to a table where the stranger has no seat
        reply = eve.post("/api/friends/invite", json={"code": code, "name": "bob"})
        assert reply.json()["code"] in ("not_your_seat", "not_friends")


def test_attack_a_friends_only_table_refuses_the_uninvited(app):
    """A friends-only table seats its host's friends and the invited only: not a stranger
    with the code, not one who forges an acceptance without an invitation."""
    with TestClient(app):
        ann, eve = account(app, "ann"), account(app, "eve")
        code = friends_table(ann, friends_only=True)
        assert eve.post("/api/friends/accept", json={"code": code}).json()["code"] == "no_invite"
        reply = eve.post(f"/api/tables/{code}/join", json={})
        assert reply.status_code == 403 and reply.json()["code"] == "friends_only"
        guest = TestClient(app)
        guest.post("/api/session", json={"name": "Guest"})
        assert guest.post(f"/api/tables/{code}/join", json={}).json()["code"] == "friends_only"
        # nor is it listed among the open tables, nor can a seated non-host change it
        assert ann.post(f"/api/tables/{code}/list", json={"on": True}).json()["code"] == (
            "friends_only_listed"
        )
        reply = eve.post(f"/api/tables/{code}/friends-only", json={"on": False})
        assert reply.status_code == 403


def test_attack_an_invitation_cannot_be_accepted_by_another_account(app):
    with TestClient(app):
        ann, bob, eve = account(app, "ann"), account(app, "bob"), account(app, "eve")
        follow(ann, "bob"), follow(bob, "ann")
        code = friends_table(ann, friends_only=True)
        ann.post("/api/friends/invite", json={"code": code, "name": "bob"})
        assert eve.post("/api/friends/accept", json={"code": code}).json()["code"] == "no_invite"
        assert eve.post(f"/api/tables/{code}/join", json={}).json()["code"] == "friends_only"
        assert eve.get("/api/friends").json()["invites"] == []


def test_attack_a_blocked_player_cannot_follow_invite_or_see_presence(app):
    """Blocking wins: the blocked one's follow reads as an unknown name, an old follow
    makes no friend, no invitation passes, no presence shows, and a friends-only table
    refuses them even when invited before the block."""
    with TestClient(app):
        ann, bob = account(app, "ann"), account(app, "bob")
        follow(ann, "bob"), follow(bob, "ann")
        code = friends_table(ann, friends_only=True)
        bob.post("/api/friends/invite", json={"code": friends_table(bob), "name": "ann"})
        storage = app.state.service.storage
        a, b = (storage.accounts.account(username=n)["player_id"] for n in ("ann", "bob"))
        storage.people.block(a, b)  # ann blocks bob (as the table's Block button does)
        assert not storage.friends.are_friends(a, b) and storage.friends.friends_of(b) == []
        assert ann.get("/api/friends").json()["invites"] == []  # bob's invitation is hidden
        reply = follow(bob, "ann")
        assert reply.status_code == 404 and reply.json()["code"] == "no_such_player"
        reply = ann.post("/api/friends/invite", json={"code": code, "name": "bob"})
        assert reply.json()["code"] == "not_friends"  # the one who blocked: no friend either
        assert follow(ann, "bob").json()["code"] == "blocked_them"
        seen = bob.get("/api/friends").json()["following"][0]
        assert not seen["friend"] and not seen["online"] and seen["tables"] == []
        assert bob.post(f"/api/tables/{code}/join", json={}).json()["code"] in (
            "friends_only",
            "full",
        )


@pytest.mark.backends("sqlite")
def test_attack_invitation_spam_is_capped_per_inviter_and_per_invitee(tmp_path):
    """One account sends a few invitations a minute (`Limits.invite_burst`), and one
    account holds at most `Limits.invites_per_invitee` unanswered: friends many could not
    flood it; the rate buckets are bounded by ``max_keys`` like every other."""
    from yahtzee_env.web.door.app import create_app

    limits = Limits(invite_burst=3, invites_per_minute=0.001, invites_per_invitee=2)
    app = create_app(tmp_path / "web.sqlite3", limits=limits)
    with TestClient(app):
        ann, bob, cat = account(app, "ann"), account(app, "bob"), account(app, "cat")
        for one, other in (("ann", bob), ("bob", ann), ("ann", cat), ("cat", ann)):
            follow(other, one)
        codes = [friends_table(c) for c in (bob, bob, cat)]
        assert (
            bob.post("/api/friends/invite", json={"code": codes[0], "name": "ann"}).status_code
            == 200
        )
        assert (
            bob.post("/api/friends/invite", json={"code": codes[1], "name": "ann"}).status_code
            == 200
        )
        reply = cat.post("/api/friends/invite", json={"code": codes[2], "name": "ann"})
        assert reply.status_code == 429 and reply.json()["code"] == "too_many_invites"
        # the same invitation again renews it (no new one); then bob's bucket is spent
        assert (
            bob.post("/api/friends/invite", json={"code": codes[0], "name": "ann"}).status_code
            == 200
        )
        reply = bob.post("/api/friends/invite", json={"code": codes[0], "name": "ann"})
        assert reply.status_code == 429 and reply.json()["code"] == "invite_budget"
        assert len(ann.get("/api/friends").json()["invites"]) == 2
        assert app.state.service.invites.max_keys == limits.max_keys


@pytest.mark.backends("sqlite")
def test_attack_following_is_rate_limited_and_capped(tmp_path):
    from yahtzee_env.web.door.app import create_app

    limits = Limits(follow_burst=3, follows_per_minute=0.001, max_follows=1)
    app = create_app(tmp_path / "web.sqlite3", limits=limits)
    with TestClient(app):
        ann = account(app, "ann")
        account(app, "bob"), account(app, "cat")
        assert follow(ann, "bob").status_code == 200
        assert follow(ann, "cat").json()["code"] == "too_many_follows"
        assert follow(ann, "cat").json()["code"] == "too_many_follows"
        reply = follow(ann, "cat")
        assert reply.status_code == 429 and reply.json()["code"] == "follow_budget"


def test_deleting_an_account_forgets_its_follows_and_invitations(app):
    with TestClient(app):
        ann, bob = account(app, "ann"), account(app, "bob")
        follow(ann, "bob"), follow(bob, "ann")
        code = friends_table(ann)
        ann.post("/api/friends/invite", json={"code": code, "name": "bob"})
        assert "following" in ann.get("/api/account/export").json()
        reply = bob.post("/api/account/delete", json={"password": PASSWORD})
        assert reply.status_code == 200, reply.text
        assert ann.get("/api/friends").json()["following"] == []


def test_a_player_is_followed_from_the_table_by_seat(app):
    """At a table, a seated account follows another seat's account without knowing its
    user name; not from outside the table, and not a guest's seat."""
    with TestClient(app):
        ann, bob, eve = account(app, "ann"), account(app, "bob"), account(app, "eve")
        code = friends_table(ann)
        assert bob.post(f"/api/tables/{code}/join", json={}).status_code == 200
        reply = bob.post("/api/friends/follow", json={"code": code, "seat": 0})
        assert reply.json() == {"following": "ann", "friend": False}, reply.text
        reply = eve.post("/api/friends/follow", json={"code": code, "seat": 0})
        assert reply.status_code == 403 and reply.json()["code"] == "not_your_seat"
        assert bob.post("/api/friends/follow", json={"code": code, "seat": "0"}).status_code == 400
        guest_table = friends_table(ann)
        guest = TestClient(app)
        guest.post("/api/session", json={"name": "Guest"})
        assert guest.post(f"/api/tables/{guest_table}/join", json={}).status_code == 200
        reply = ann.post("/api/friends/follow", json={"code": guest_table, "seat": 1})
        assert reply.status_code == 409 and reply.json()["code"] == "not_followable"


def test_presence_and_invitations_expire_on_the_clock(app, clock):
    """A friend is online for `Limits.online_window_s` after a page of theirs asked; an
    invitation lasts `Limits.invite_ttl_s`, and the sweep forgets both (the clock is the
    test's)."""
    limits = app.state.service.limits
    with TestClient(app):
        ann, bob = account(app, "ann"), account(app, "bob")
        follow(ann, "bob"), follow(bob, "ann")
        code = friends_table(bob)
        bob.post("/api/friends/invite", json={"code": code, "name": "ann"})
        bob.get("/api/friends")
        assert ann.get("/api/friends").json()["following"][0]["online"]
        clock.now += limits.online_window_s + 1
        seen = ann.get("/api/friends").json()
        assert not seen["following"][0]["online"] and seen["online"] == 1  # ann alone
        assert len(seen["invites"]) == 1
        clock.now += limits.invite_ttl_s
        assert ann.get("/api/friends").json()["invites"] == []
        assert ann.post("/api/friends/accept", json={"code": code}).json()["code"] == "no_invite"
        app.state.service.friends.sweep()
        storage = app.state.service.storage
        b = storage.accounts.account(username="bob")["player_id"]
        assert storage.friends.seen_among([b], 10 * limits.invite_ttl_s) == set()
