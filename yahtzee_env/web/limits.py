"""Who may ask how much: token buckets keyed by client, socket slots, and their numbers.

Every limit is keyed by who asks (the client address, or a player or seat token), never by
connection, so a new connection per request buys nothing. `Limits` holds every figure in one
dataclass (`yahtzee serve` and the tests override some); `RateLimiter` is the token bucket;
`SocketSlots` counts open WebSockets per session, per address, per table and in total.

Who first, where second: the caps that a person reaches (open tables, sockets, failed
sign-ins of one name) count per player, session or user name; the per-address caps are
backstops many times larger, sized for a school, an office or a mobile carrier's shared
addresses, and their messages say "your network".

Behind a reverse proxy the address is the forwarded one only when ``--trust-proxy`` names
the proxy (uvicorn's `ProxyHeadersMiddleware` rewrites the client before the app sees it).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass


@dataclass
class Limits:
    """The server's limits (defaults are those of ``yahtzee serve``)."""

    rate: float = 60.0  # requests (or WebSocket messages) per second per address, sustained
    burst: int = 120  # ... and in a burst
    page_rate: float = 300.0  # the page's own files (a bucket apart) per second per address
    page_burst: int = 1500  # ... in a burst: 50 first visits at once
    token_rate: float = 20.0  # moves, hints, joins per second per player or seat token
    token_burst: int = 40
    # games played in the page (offline, or online by choice: issue 50) a player may send
    # for the server to replay: a day offline synced at once, then more than a person plays
    page_games_per_minute: float = 6.0
    page_game_burst: int = 100
    lookups_per_minute: float = 20.0  # failed table-code lookups per browser (session) ...
    lookup_burst: int = 20
    network_lookups_per_minute: float = 200.0  # ... and per address: a network's backstop
    network_lookup_burst: int = 200
    # profiles read (issue 62) per browser (session, else its device cookie, else address)
    # and per address (a network's backstop): a person reads a few a minute; a name list
    # tried against /api/profiles is held to this
    profiles_per_minute: float = 30.0
    profile_burst: int = 30
    network_profiles_per_minute: float = 300.0
    network_profile_burst: int = 300
    sockets_per_client: int = 16  # anonymous (unseated) WebSockets per session (or address)
    sockets_per_address: int = 256  # ... and per address: a shared network's backstop
    sockets_per_table: int = 32  # anonymous WebSockets per table
    sockets_per_seat: int = 4  # sockets of one seat (a newer one replaces the oldest)
    sockets_total: int = 2000  # every open WebSocket of the server
    send_queue: int = 32  # messages queued for a socket before it counts as stuck
    hello_timeout: float = 5.0  # s a socket refused an anonymous slot has to show a seat token
    tables_per_player: int = 20  # open (unfinished) tables a player may host
    tables_per_address: int = 1000  # ... and an address: a shared network's backstop
    players_per_hour: float = 600.0  # new players (profiles, guest sessions) per address: a
    player_burst: int = 200  # school's classes behind one address, hundreds an hour
    # loaded tables kept in memory (least recently used go first; ~50 KB each): as many as
    # sockets, so that no table in play is dropped to be rebuilt at its next move (issue 60:
    # 500 dropped and rebuilt half of 1,000 players' tables at each sweep, ~1 ms each)
    tables_in_memory: int = 2000
    idle_evict_s: float = 600.0  # a table idle this long leaves memory (reloads on use)
    finished_evict_s: float = 10.0  # ... one whose game is over, this long (`service.settle`)
    expire_unstarted_s: float = 86_400.0  # a table never started is deleted after a day
    expire_idle_s: float = 30 * 86_400.0  # any table idle this long is deleted
    # an unfinished game against the computer, or online without a turn clock: a week
    expire_solo_s: float = 7 * 86_400.0
    # an online game with a turn clock nobody has moved in: hours (it waits for its
    # deadline, and at least the clock times its human seats: `Storage.expire`)
    expire_abandoned_s: float = 12 * 3600.0
    sweep_every_s: float = 60.0  # how often the sweeper runs
    freeze_every_s: float = 2.0  # the collector's survivors frozen (`memory.Settler`) ...
    unfreeze_every_s: float = 3600.0  # ... and given back to a full collection, hourly
    # or at once past this many frozen objects (and twice what the last one left): cycles
    frozen_most: int = 1_500_000  # that refusals leave are not held for an hour (issue 60)
    # ... counted once a minute, not at each freeze: the count walks every frozen object
    # with the GIL held (20-60 ms at 1,000 players, every 2 s: issue 60, seventh round)
    frozen_count_every_s: float = 60.0
    read_timeout_s: float = 10.0  # a request body must arrive within this
    logins_per_minute: float = 60.0  # sign-ins and sign-ups per address (a backstop; the
    # recovery codes have a bucket of their own)
    login_burst: int = 120
    # the checks of a user name's password or recovery code (`people.logins`; a browser
    # that signed in to the account before skips them all), counted in the database:
    login_free_failures: int = 2  # failed checks of a name from one address before it waits
    login_retry_s: float = 5.0  # that address's first wait; it doubles with each failure ...
    login_retry_max_s: float = 60.0  # ... up to this (429 `login_wait`, with Retry-After)
    login_forget_s: float = 60.0  # one failure is forgotten every this many seconds
    login_remember_s: float = 3600.0  # an address that tried a name within this is "returning"
    name_checks_burst: int = 3  # checks of a name for addresses new to it: a burst ...
    name_checks_per_minute: float = 4.0  # ... and a few a minute (429 `name_budget`)
    name_retries_burst: int = 1  # checks of a name for returning addresses, all of them
    name_retries_per_minute: float = 1.0  # together (429 `name_budget`)
    login_lease_s: float = 60.0  # one check per name and address in flight (429 `name_busy`)
    hash_workers: int = 2  # argon2 runs at once (19 MiB each) ...
    hash_queue: int = 256  # ... and waiting for a slot (past it: 503 with Retry-After)
    clock_every_s: float = 0.5  # how often the turn deadlines are checked
    queue_per_address: int = 40  # players of one address (a network) waiting for a quick match
    queue_total: int = 5000  # players waiting for a quick match, in all
    # friends and invitations (issue 62), per account: follows a minute and in all, the
    # invitations one sends a minute, those one may hold unanswered, and how long they last
    follows_per_minute: float = 20.0
    follow_burst: int = 20
    max_follows: int = 200
    invites_per_minute: float = 6.0
    invite_burst: int = 10
    invites_per_invitee: int = 10
    invite_ttl_s: float = 3600.0
    # e-mail (issue 62, with ``yahtzee serve --smtp``): at most one "your turn" mail (and one
    # invitation) per player and table within this; per account, addresses set and
    # confirmations resent an hour; confirmation mails to one address a day, whoever asks
    # (no mail-bombing a stranger); how long a confirmation link lasts; mails waiting to
    # go (past it: dropped and logged) and how long the SMTP server may take to answer
    mail_every_s: float = 3 * 3600.0
    email_sets_per_hour: float = 6.0
    email_set_burst: int = 6
    confirmations_per_address: int = 3
    confirm_ttl_s: float = 86_400.0
    mail_queue: int = 200
    smtp_timeout_s: float = 10.0
    # tournaments (issue 62), per account: those one may have created and not finished,
    # how many one may create an hour, and the joins one may ask a minute
    tournaments_per_account: int = 3
    tournaments_per_hour: float = 6.0
    tournament_burst: int = 3
    tournament_joins_per_minute: float = 10.0
    tournament_join_burst: int = 10
    tournament_every_s: float = 2.0  # how often the tournaments' next steps are taken
    grade_every_s: float = 5.0  # how often the games just ended are graded (a clean game)
    grade_share: float = 0.02  # ... with at most this share of one core's time (CPU)
    online_window_s: float = 120.0  # a player seen within this is online (the page asks each 20 s)
    max_keys: int = 50_000  # buckets kept per limiter (least recently used are forgotten)


class RateLimiter:
    """Token buckets: ``rate`` tokens a second up to ``burst``; `allow` spends one.

    At most ``max_keys`` buckets are kept: the least recently used is forgotten first (it
    was idle, so its bucket was nearly full anyway)."""

    def __init__(self, rate: float, burst: float, max_keys: int = 50_000) -> None:
        self.rate, self.burst, self.max_keys = rate, burst, max_keys
        self.buckets: OrderedDict[Hashable, tuple[float, float]] = OrderedDict()

    def _tokens(self, key: Hashable, now: float) -> float:
        tokens, last = self.buckets.get(key, (self.burst, now))
        return min(self.burst, tokens + (now - last) * self.rate)

    def allow(self, key: Hashable, cost: float = 1.0) -> bool:
        now = time.monotonic()
        tokens = self._tokens(key, now)
        ok = tokens >= cost
        self.buckets[key] = (tokens - cost if ok else tokens, now)
        self.buckets.move_to_end(key)
        while len(self.buckets) > self.max_keys:
            self.buckets.popitem(last=False)
        return ok

    def retry_after(self, key: Hashable, cost: float = 1.0) -> float:
        """Seconds until ``key`` can spend ``cost`` tokens (0 if it can now)."""
        missing = cost - self._tokens(key, time.monotonic())
        return max(0.0, missing / self.rate) if self.rate > 0 else float("inf")

    def forget_full(self) -> int:
        """Forget the buckets that have filled up again (they hold nothing a new one would
        not): what the clients that left, sockets closed, leave behind. How many."""
        now = time.monotonic()
        full = [k for k in self.buckets if self._tokens(k, now) >= self.burst]
        for key in full:
            del self.buckets[key]
        return len(full)

    def exhausted(self, key: Hashable) -> bool:
        """True if ``key`` cannot spend a token now (spends nothing)."""
        return key in self.buckets and self._tokens(key, time.monotonic()) < 1


class SocketSlots:
    """Open WebSockets: anonymous ones per address and per table, seated ones per seat, and
    all of them. `take_anonymous` / `take_seat` say why not (or None); `release` gives back."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.total = 0
        self.by_client: dict[str, int] = {}
        self.by_address: dict[str, int] = {}
        self.by_table: dict[str, int] = {}

    def refuse_anonymous(self, address: str, code: str, client: str | None = None) -> str | None:
        """Why an anonymous socket is refused (None: it is not). ``client``: who opens it
        (the session's key; None: the address is all there is to go by)."""
        lim = self.limits
        client = client or f"addr:{address}"
        if self.total >= lim.sockets_total:
            return "the server is full"
        if self.by_client.get(client, 0) >= lim.sockets_per_client:
            return "too many connections from you: close a tab first"
        if self.by_address.get(address, 0) >= lim.sockets_per_address:
            return "too many connections from your network"
        if self.by_table.get(code, 0) >= lim.sockets_per_table:
            return "too many watchers at this table"
        return None

    def take_anonymous(self, address: str, code: str, client: str | None = None) -> None:
        self.total += 1
        client = client or f"addr:{address}"
        for counts, key in ((self.by_client, client), (self.by_address, address)):
            counts[key] = counts.get(key, 0) + 1
        self.by_table[code] = self.by_table.get(code, 0) + 1

    def release_anonymous(self, address: str, code: str, client: str | None = None) -> None:
        self.total -= 1
        client = client or f"addr:{address}"
        for counts, key in (
            (self.by_client, client),
            (self.by_address, address),
            (self.by_table, code),
        ):
            counts[key] -= 1
            if not counts[key]:
                del counts[key]

    def take_seated(self) -> None:
        # a seated player always gets a socket (its seat's sockets are bounded elsewhere)
        self.total += 1

    def release_seated(self) -> None:
        self.total -= 1


__all__ = ["Limits", "RateLimiter", "SocketSlots"]
