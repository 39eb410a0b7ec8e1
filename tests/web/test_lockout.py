"""No lockout of the owner (issue 57, OWASP ASVS V2.2), attacked: whatever strangers do from
one address or many, the owner's right password from a new device and a valid recovery code
are answered at once, while the checks of one account stay a few a minute, counted in the
database whatever process asks (`people.logins`).

Every test moves an injected clock (``clock``: the stored times' and the counts' clock) and
sends its requests at once from threads; the client address is the ``X-Forwarded-For`` of
each request (the app trusts any proxy here)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("httpx", reason="TestClient needs httpx")
pytest.importorskip("argon2", reason="needs the web extra (argon2-cffi)")

from starlette.testclient import TestClient

from yahtzee_env.web.door.app import create_app
from yahtzee_env.web.limits import Limits
from yahtzee_env.web.storage import token_hash

PASSWORD = "correct horse battery"
NEW_PASSWORD = "staple gun orbit lamp"
OWNER = "10.0.0.1"  # the address the owner signed up from
ANSWER_S = 5.0  # "within a few seconds"


def lockout_app(db, clock, **limits):
    """The app with the shipped limits but ``limits``, and a hash slot for every request
    at once: each TestClient thread runs its own event loop, and one loop's slot (an anyio
    limiter) cannot wake a task of another; a server has one loop."""
    limits = Limits(**{"hash_workers": 64, **limits})
    return create_app(db, trust_proxy="*", clock=clock, limits=limits)


def sign_in(c, address, password="a wrong guess", name="ada"):
    return c.post(
        "/api/account/signin",
        json={"username": name, "password": password},
        headers={"x-forwarded-for": address},
    )


def recover(c, address, code, name="ada"):
    body = {"username": name, "code": code, "password": NEW_PASSWORD}
    return c.post("/api/account/recover", json=body, headers={"x-forwarded-for": address})


def sign_up(c) -> list[str]:
    """The owner's account ``ada`` (from `OWNER`): its recovery codes."""
    reply = c.post(
        "/api/account/signup",
        json={"username": "ada", "password": PASSWORD},
        headers={"x-forwarded-for": OWNER},
    )
    assert reply.status_code == 200, reply.text
    return reply.json()["recovery_codes"]


def count_checks(app) -> list[float]:
    """The injected clock's time of every password verification (argon2) of ``app``'s
    accounts from now on."""
    service = app.state.service
    real, at, lock = service.accounts.hasher, [], threading.Lock()

    class Counting:  # argon2's PasswordHasher has __slots__: wrap it
        def verify(self, hash_, password):
            with lock:
                at.append(service.storage.clock())
            return real.verify(hash_, password)

        def __getattr__(self, name):
            return getattr(real, name)

    service.accounts.hasher = Counting()
    return at


def timed(call, *args):
    """``call(*args)`` and the real seconds it took."""
    started = time.monotonic()
    reply = call(*args)
    return reply, time.monotonic() - started


def assert_refused_well(replies):
    """Each reply a 401 (checked, wrong) or a 429 with a Retry-After (never a 5xx, never
    a wait)."""
    for r in replies:
        assert r.status_code in (401, 429), r.text
        if r.status_code == 429:
            assert r.json()["code"] in ("name_busy", "login_wait", "name_budget"), r.text
            assert int(r.headers["retry-after"]) >= 1


def test_attack_one_address_looping_cannot_keep_the_owner_out(db, clock):
    """The line a stranger kept full (issue 57): twenty looping wrong sign-ins from one
    address, at once and again; the owner's right password from a new device (no device
    cookie, another address) and a valid recovery code, sent among them, get in at once."""
    app = lockout_app(db, clock)
    with TestClient(app) as owner:
        codes = sign_up(owner)
        stranger, phone, laptop = TestClient(app), TestClient(app), TestClient(app)
        checks = count_checks(app)
        replies, mine = [], []
        with ThreadPoolExecutor(24) as pool:
            for rnd in range(5):
                sent = [pool.submit(sign_in, stranger, "10.6.6.6") for _ in range(20)]
                if rnd == 2:  # the owner, while the stranger keeps at it
                    mine = pool.submit(timed, sign_in, phone, "10.0.2.1", PASSWORD)
                if rnd == 3:  # and a recovery code (after: it sets a new password)
                    mine = pool.submit(timed, recover, laptop, "10.0.3.1", codes[0])
                at = clock.now
                replies += [f.result() for f in sent]
                if rnd == 2:
                    (password, took) = mine.result()
                if rnd == 3:
                    (recovery, took_recovery) = mine.result()
                assert clock.now == at  # nobody waited on the clock
                clock.now += 10
        assert password.status_code == 200, password.text
        assert recovery.status_code == 200, recovery.text
        assert took < ANSWER_S and took_recovery < ANSWER_S
        assert_refused_well(replies)
        assert sum(r.status_code == 401 for r in replies) <= 3  # one address: a few a minute
        assert len(checks) <= 4  # the stranger's few, and the owner's one


def test_attack_twenty_addresses_looping_cannot_keep_the_owner_out(db, clock):
    """The same twenty looping wrong sign-ins, each from an address of its own: after their
    first go every address has tried the name (checked, or back before its Retry-After)
    and draws from the name's returning budget; the owner's new device, new to the name,
    draws from the other one: signed in at once, or (caught just after the strangers' first
    burst) told to come back within a few seconds, and in then. A recovery code goes at
    once."""
    app = lockout_app(db, clock)
    with TestClient(app) as owner:
        codes = sign_up(owner)
        stranger, phone, laptop = TestClient(app), TestClient(app), TestClient(app)
        replies, answers, came, recovery = [], [], None, None
        with ThreadPoolExecutor(24) as pool:
            for rnd in range(6):
                sent = [pool.submit(sign_in, stranger, f"10.6.0.{i}") for i in range(20)]
                mine = []
                if rnd >= 2 and (not answers or answers[-1][0].status_code != 200):
                    came = clock.now if came is None else came
                    mine = [pool.submit(timed, sign_in, phone, "10.0.2.1", PASSWORD)]
                if rnd == 4:  # after the password (a recovery sets a new one)
                    recovery = pool.submit(timed, recover, laptop, "10.0.3.1", codes[0])
                replies += [f.result() for f in sent]
                answers += [f.result() for f in mine]
                if answers and answers[-1][0].status_code == 429:  # told to wait: it does
                    (refused, _took) = answers[-1]
                    assert refused.json()["code"] == "name_budget"
                    assert int(refused.headers["retry-after"]) <= ANSWER_S
                clock.now += 5  # the strangers loop faster than they are told to
        (password, took) = answers[-1]
        assert password.status_code == 200 and took < ANSWER_S, password.text
        assert len(answers) <= 2 and (len(answers) - 1) * 5 <= ANSWER_S  # in within 5 s
        (recovery, took_recovery) = recovery.result()
        assert recovery.status_code == 200 and took_recovery < ANSWER_S, recovery.text
        assert_refused_well(replies)
        limits = app.state.service.limits
        checked = sum(r.status_code == 401 for r in replies)
        assert checked <= limits.name_checks_burst + limits.name_retries_burst + 1


def test_attack_sixty_addresses_at_once_get_a_handful_checked_a_minute(db, clock):
    """Sixty guesses at once from sixty addresses, again every ten seconds for three
    minutes: at most five are checked (argon2 runs) in any minute of the clock, every other
    one is refused at once with a Retry-After."""
    app = lockout_app(db, clock)
    with TestClient(app) as owner:
        sign_up(owner)
        stranger = TestClient(app)
        checks = count_checks(app)
        start, replies = clock.now, []
        with ThreadPoolExecutor(16) as pool:
            for _ in range(18):
                replies += pool.map(lambda i: sign_in(stranger, f"10.7.0.{i}"), range(60))
                clock.now += 10
        assert_refused_well(replies)
        assert sum(r.status_code == 401 for r in replies) == len(checks)
        per_minute = [
            sum(start + 60 * m <= t < start + 60 * (m + 1) for t in checks) for m in range(3)
        ]
        assert max(per_minute) <= 5, per_minute
        assert 1 <= sum(per_minute) <= 5 + 2 * 2, per_minute
        refused = [r for r in replies if r.status_code == 429]
        assert len(refused) >= len(replies) - 10


def test_attack_two_instances_share_the_counts(db, clock):
    """Two server instances on one database (`db`: a SQLite file, a PostgreSQL database):
    guesses split between them draw from the same budgets and the same counts of each
    address, as if one server had them all."""
    first, second = (lockout_app(db, clock, name_retries_burst=10) for _ in range(2))
    with TestClient(first) as a, TestClient(second) as b:
        sign_up(a)
        a, b = TestClient(first), TestClient(second)  # strangers' browsers, at each instance
        at_a, at_b = count_checks(first), count_checks(second)
        replies = [sign_in((a, b)[i % 2], f"10.8.0.{i}") for i in range(12)]
        assert_refused_well(replies)
        burst = first.state.service.limits.name_checks_burst
        assert [r.status_code for r in replies] == [401] * burst + [429] * (12 - burst)
        assert len(at_a) + len(at_b) == burst  # not a burst per instance
        # one address's failures, made at one instance, make it wait at the other
        clock.now += 600
        for i in range(3):
            assert sign_in((a, b)[i % 2], "10.8.1.1").status_code == 401
        wait = sign_in(b, "10.8.1.1")
        assert wait.status_code == 429 and wait.json()["code"] == "login_wait"
        assert sign_in(a, "10.8.1.1").json()["code"] == "login_wait"


def test_attack_password_guesses_never_hold_up_a_recovery_code(db, clock):
    """Strangers empty the name's password budgets from many addresses and push the
    owner's own network (a shared address) to its longest wait for passwords; wrong
    recovery codes come from other addresses too. The owner's valid code, from that same
    network, is checked at once."""
    app = lockout_app(db, clock)
    with TestClient(app) as owner:
        codes = sign_up(owner)
        stranger, laptop = TestClient(app), TestClient(app)
        with ThreadPoolExecutor(16) as pool:
            for _ in range(6):
                guesses = [pool.submit(sign_in, stranger, f"10.9.0.{i}") for i in range(30)]
                guesses += [pool.submit(sign_in, stranger, OWNER) for _ in range(4)]
                wrong = [
                    pool.submit(recover, stranger, f"10.9.1.{i}", "AAAA-BBBB-CCCC")
                    for i in range(8)
                ]
                assert_refused_well([f.result() for f in guesses + wrong])
                clock.now += 2
        assert sign_in(stranger, OWNER).json()["code"] in ("login_wait", "name_budget")
        reply, took = timed(recover, laptop, OWNER, codes[1])
        assert reply.status_code == 200 and took < ANSWER_S, reply.text


def test_attack_spread_guesses_leave_the_owners_new_address_untouched(db, clock):
    """A stranger names the owner's address in a forged X-Forwarded-For from a peer the
    server does not trust as a proxy, then spreads guesses over many addresses, pushes each
    to its wait and keeps a check in flight where it can: none of it touches the owner's
    new address, which signs in at once."""
    app = lockout_app(db, clock)
    with TestClient(app) as owner:
        sign_up(owner)
        # a forged address from an untrusted peer counts against the peer, not the owner
        strict = create_app(db, trust_proxy="10.0.0.254", clock=clock)
        with TestClient(strict, client=("10.66.0.1", 4000)) as forger:
            assert_refused_well([sign_in(forger, "10.0.5.5") for _ in range(6)])
        stranger = TestClient(app)
        with ThreadPoolExecutor(16) as pool:
            for _ in range(8):
                sent = [pool.submit(sign_in, stranger, f"10.10.0.{i // 3}") for i in range(45)]
                assert_refused_well([f.result() for f in sent])
                clock.now += 3
        rows = app.state.service.storage.logins.tries("ada")
        assert len(rows) == 1 + 15  # the forger's own address and the stranger's fifteen
        assert token_hash("login:10.0.5.5") not in {r["addr"] for r in rows}
        assert token_hash("login:10.66.0.1") in {r["addr"] for r in rows}
        reply, took = timed(sign_in, TestClient(app), "10.0.5.5", PASSWORD)
        assert reply.status_code == 200 and took < ANSWER_S, reply.text
