"""The schema of the web game's database: the migrations and the two SQL dialects.

The migrations only ever grow, and each runs in one transaction (`base.Database.migrate`):
SQLite counts them in ``PRAGMA user_version``, PostgreSQL in the ``schema_version`` table.
They are written once for both backends; ``{pk}``, ``{real}``, ``{int64}`` and
``{without_rowid}`` are the dialect's (`DIALECTS`).
"""

from __future__ import annotations

import re

# The migrations, written once for both backends; {pk}, {real}, {int64} and {without_rowid}
# are the dialect's.
MIGRATIONS: list[str] = [
    # 1: the first schema
    """
    CREATE TABLE players (
        id {pk},
        token_hash TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        created {real} NOT NULL
    );
    CREATE TABLE tables (
        code TEXT PRIMARY KEY,
        created {real} NOT NULL,
        rules TEXT NOT NULL,
        seed {int64} NOT NULL,
        online INTEGER NOT NULL,
        match INTEGER NOT NULL,
        coach INTEGER NOT NULL,
        fill_level TEXT NOT NULL,
        started INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE seats (
        code TEXT NOT NULL REFERENCES tables(code),
        seat INTEGER NOT NULL,
        kind TEXT NOT NULL,          -- 'human' or a CPU level name
        name TEXT NOT NULL,
        player_id {int64} REFERENCES players(id),
        token_hash TEXT,             -- NULL: a free friend seat (or a CPU)
        PRIMARY KEY (code, seat)
    );
    CREATE TABLE games (
        code TEXT NOT NULL REFERENCES tables(code),
        idx INTEGER NOT NULL,
        match_no INTEGER NOT NULL,
        first INTEGER NOT NULL,
        PRIMARY KEY (code, idx)
    );
    CREATE TABLE actions (
        code TEXT NOT NULL,
        idx INTEGER NOT NULL,        -- game index at the table
        seq INTEGER NOT NULL,        -- action number within the game
        seat INTEGER NOT NULL,
        action INTEGER NOT NULL,     -- engine action id
        regret {real},               -- coach's grade of a human decision (NULL: not graded)
        PRIMARY KEY (code, idx, seq)
    );
    CREATE TABLE results (
        player_id {int64} NOT NULL REFERENCES players(id),
        code TEXT NOT NULL,
        idx INTEGER NOT NULL,
        seat INTEGER NOT NULL,
        score INTEGER NOT NULL,
        outcome TEXT NOT NULL,       -- 'win', 'draw' or 'loss'
        yahtzees INTEGER NOT NULL,
        upper_bonus INTEGER NOT NULL,
        opponents TEXT NOT NULL,     -- the CPU levels at the table, or 'humans'
        online INTEGER NOT NULL,
        finished {real} NOT NULL,
        PRIMARY KEY (code, idx, seat)
    );
    CREATE INDEX results_player ON results(player_id, finished);
    """,
    # 2: bounded resources (issue 17): last activity, whether the current game is over, and
    # who hosts the table (player id, hashed client address), for expiry and per-host caps
    """
    ALTER TABLE tables ADD COLUMN updated {real};
    ALTER TABLE tables ADD COLUMN over INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE tables ADD COLUMN host_player {int64};
    ALTER TABLE tables ADD COLUMN host_addr TEXT;
    UPDATE tables SET updated = created;
    CREATE INDEX tables_updated ON tables(updated);
    CREATE INDEX tables_host_player ON tables(host_player, over);
    CREATE INDEX tables_host_addr ON tables(host_addr, over);
    """,
    # 3: a table may make its game reviews public (anyone with the link)
    """
    ALTER TABLE tables ADD COLUMN public INTEGER NOT NULL DEFAULT 0;
    """,
    # 4: several server processes (issue 20): the table's revision, moved on by one at every
    # committed change, so that a process can tell its copy of a table is behind
    """
    ALTER TABLE tables ADD COLUMN rev {int64} NOT NULL DEFAULT 0;
    """,
    # 5: people at online tables (issue 18): the turn timer and its deadline (stored, so a
    # restart plays a turn whose time ran out while the server was down), play-again votes,
    # who may act for a seat (a session's player) and whether the computer plays it for now;
    # accounts (argon2id hashes) and sessions (cookies, stored hashed)
    """
    ALTER TABLE tables ADD COLUMN turn_timer INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE tables ADD COLUMN deadline {real};
    ALTER TABLE tables ADD COLUMN votes TEXT NOT NULL DEFAULT '';
    ALTER TABLE seats ADD COLUMN owner_id {int64};
    ALTER TABLE seats ADD COLUMN away TEXT;
    CREATE INDEX tables_deadline ON tables(deadline);
    CREATE INDEX seats_owner ON seats(owner_id);
    CREATE TABLE accounts (
        player_id {int64} PRIMARY KEY REFERENCES players(id),
        username TEXT NOT NULL UNIQUE,   -- case-folded
        password_hash TEXT NOT NULL,     -- argon2id, PHC string
        created {real} NOT NULL
    );
    CREATE TABLE sessions (
        token_hash TEXT PRIMARY KEY,
        player_id {int64} NOT NULL REFERENCES players(id),
        created {real} NOT NULL,
        seen {real} NOT NULL
    );
    CREATE INDEX sessions_player ON sessions(player_id);
    """,
    # 6: account care and the table's people (issue 32): recovery codes (argon2id; a short
    # selector in clear says which hash to verify), table chat (kept with the game, deleted
    # with the table), reports with the last messages (for a moderator) and blocked accounts
    """
    CREATE TABLE recovery_codes (
        player_id {int64} NOT NULL REFERENCES players(id),
        selector TEXT NOT NULL,
        code_hash TEXT NOT NULL,       -- argon2id of the whole code, PHC string
        created {real} NOT NULL,
        used {real},                   -- NULL: still valid
        PRIMARY KEY (player_id, selector)
    );
    CREATE TABLE chat (
        id {pk},
        code TEXT NOT NULL,
        idx INTEGER NOT NULL,          -- the game it was said in
        seat INTEGER NOT NULL,
        player_id {int64},
        name TEXT NOT NULL,
        kind TEXT NOT NULL,            -- 'text' or 'emote'
        body TEXT NOT NULL,            -- plain text (at most 200 characters), or the emote
        created {real} NOT NULL
    );
    CREATE INDEX chat_code ON chat(code, id);
    CREATE TABLE reports (
        id {pk},
        code TEXT NOT NULL,
        reporter_id {int64},
        reporter_seat INTEGER NOT NULL,
        target_id {int64},
        target_seat INTEGER NOT NULL,
        target_name TEXT NOT NULL,
        messages TEXT NOT NULL,        -- JSON: the table's last messages when reported
        created {real} NOT NULL
    );
    CREATE UNIQUE INDEX reports_once ON reports(code, reporter_seat, target_seat);
    CREATE TABLE blocks (
        player_id {int64} NOT NULL REFERENCES players(id),
        blocked_id {int64} NOT NULL REFERENCES players(id),
        created {real} NOT NULL,
        PRIMARY KEY (player_id, blocked_id)
    );
    CREATE INDEX blocks_blocked ON blocks(blocked_id);
    """,
    # 7: a place to play (issue 32): the quick-match queue (one row per waiting player,
    # deleted when cancelled, consumed or stale), ratings (openskill's mu and sigma per
    # account, and which games were rated, so that none counts twice), the browser each
    # seat was taken from (hashed; seats of one browser never rate each other), tables
    # listed as open, and a table's spectator link (NULL: off)
    """
    CREATE TABLE queue (
        player_id {int64} PRIMARY KEY,
        addr_hash TEXT NOT NULL,
        device TEXT,
        seats INTEGER NOT NULL,
        rules TEXT NOT NULL,
        fill_level TEXT NOT NULL,
        name TEXT NOT NULL,
        created {real} NOT NULL,
        deadline {real} NOT NULL,
        seen {real} NOT NULL,
        table_code TEXT,                -- NULL: waiting; '~...': being seated; else the table
        seat INTEGER
    );
    CREATE INDEX queue_request ON queue(seats, rules, created);
    CREATE INDEX queue_addr ON queue(addr_hash);
    CREATE TABLE ratings (
        player_id {int64} PRIMARY KEY REFERENCES players(id),
        mu {real} NOT NULL,
        sigma {real} NOT NULL,
        games INTEGER NOT NULL,
        updated {real} NOT NULL
    );
    CREATE INDEX ratings_mu ON ratings(mu);
    CREATE TABLE rated_games (
        code TEXT NOT NULL,
        idx INTEGER NOT NULL,
        player_id {int64} NOT NULL,
        mu_before {real} NOT NULL,
        mu_after {real} NOT NULL,
        finished {real} NOT NULL,
        PRIMARY KEY (code, idx, player_id)
    );
    CREATE TABLE seat_devices (
        code TEXT NOT NULL,
        seat INTEGER NOT NULL,
        device TEXT NOT NULL,
        PRIMARY KEY (code, seat)
    );
    ALTER TABLE tables ADD COLUMN listed INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE tables ADD COLUMN watch TEXT;
    CREATE INDEX tables_listed ON tables(listed, started);
    CREATE INDEX tables_watch ON tables(watch);
    """,
    # 8: no lockout by strangers (issue 31): the accounts each browser signed in to (the
    # browser's ``yz_device`` cookie, stored hashed), whose sign-ins are never slowed
    """
    CREATE TABLE devices (
        token_hash TEXT NOT NULL,
        player_id {int64} NOT NULL REFERENCES players(id),
        created {real} NOT NULL,       -- the latest sign-in from it
        PRIMARY KEY (token_hash, player_id)
    );
    CREATE INDEX devices_player ON devices(player_id);
    CREATE INDEX devices_created ON devices(created);
    """,
    # 9: games played offline in the page (issue 50), replayed by the server and kept with
    # the player's results, marked: never rated (the page dealt their dice). 2 marks a game
    # played in the page while online (`players.PLAYED_IN_PAGE`)
    """
    ALTER TABLE results ADD COLUMN offline INTEGER NOT NULL DEFAULT 0;
    """,
    # 10: dice players can check (issue 49): the table's dice secret (64 hex digits; each
    # game's dice seed is derived from it, `deal.game_dice_seed`; NULL: a table stored
    # before it), whether every seat draws the same dice (and a quick-match request's
    # preference for it), and per result what its seat rolled (NULL for games without
    # seeded dice): the statistics' fair-dice test
    """
    ALTER TABLE tables ADD COLUMN dice_secret TEXT;
    ALTER TABLE tables ADD COLUMN duplicate INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE results ADD COLUMN faces TEXT;           -- '1,2,..': the six face counts
    ALTER TABLE results ADD COLUMN rolls INTEGER;
    ALTER TABLE results ADD COLUMN yatzy_rolls INTEGER;
    ALTER TABLE results ADD COLUMN yatzy_expected {real};
    ALTER TABLE queue ADD COLUMN duplicate INTEGER NOT NULL DEFAULT 0;
    """,
    # 11: who made a move (issue 46): 1 when the computer played it for a human seat (away,
    # timed out), so the result can say "the computer played N of your 13 turns"
    """
    ALTER TABLE actions ADD COLUMN auto INTEGER NOT NULL DEFAULT 0;
    """,
    # 12: a blocked account's messages (issue 57): stored like any other (their ids in the
    # one sequence), 1 when only their author reads them (`people.PeopleStore.chat_of`)
    """
    ALTER TABLE chat ADD COLUMN hidden INTEGER NOT NULL DEFAULT 0;
    """,
    # 13: the seats' client seeds (issue 58): the table's dice derivation (NULL: a table
    # stored before, 'sha256-ctr-v1'; since, 'hmac-sha256-v2') and the client seeds each
    # seat sent, per game (JSON {"idx": [seed or null per seat]}, `seeds.dump`)
    """
    ALTER TABLE tables ADD COLUMN dice TEXT;
    ALTER TABLE tables ADD COLUMN client_seeds TEXT;
    """,
    # 14: no lockout of the owner (issue 57): the checks of a user name's secrets, counted
    # in the database so that every process sees them (`people.logins`): per user name,
    # client address (hashed) and kind ('password' or 'recovery') the failed checks and the
    # one in flight; per user name and pool ('new' or 'returning' addresses) a budget, as
    # its theoretical arrival time (GCRA: 0 is a full bucket)
    """
    CREATE TABLE login_tries (
        name TEXT NOT NULL,            -- the user name as typed, case-folded
        addr TEXT NOT NULL,            -- SHA-256 of the client address
        kind TEXT NOT NULL,
        failures {real} NOT NULL,      -- failed checks as of `updated` (they decay)
        updated {real} NOT NULL,       -- the latest failure
        seen {real} NOT NULL,          -- the latest attempt, checked or refused
        tried {real} NOT NULL,         -- the latest check, or return before its Retry-After
        busy_until {real} NOT NULL,    -- a check in flight until then (0: none)
        retry_at {real} NOT NULL,      -- the Retry-After of its latest refusal by a budget
        PRIMARY KEY (name, addr, kind)
    );
    CREATE INDEX login_tries_seen ON login_tries(seen);
    CREATE TABLE login_budgets (
        name TEXT NOT NULL,
        pool TEXT NOT NULL,
        tat {real} NOT NULL,
        PRIMARY KEY (name, pool)
    );
    """,
    # 15: sweeps that do not grow with the games kept (issue 60): the tables by whether their
    # game is over, then their last move (`TableStore.expire` read every stored table,
    # finished ones kept 30 days included, under SQLite's one lock; it replaces the index on
    # the last move alone, so that a move still moves one index entry), the sessions by age
    # (their expiry counted them all), and the open listing newest first without a sort
    """
    DROP INDEX tables_updated;
    CREATE INDEX tables_over_updated ON tables(over, updated);
    CREATE INDEX sessions_created ON sessions(created);
    DROP INDEX tables_listed;
    CREATE INDEX tables_listed ON tables(listed, started, created);
    """,
    # 16: the time bank (issue 62): the seconds a turn adds to its seat's bank (0: the fixed
    # clock; the cap is ``turn_timer``) and the seats' banks (JSON, stored with the deadline)
    """
    ALTER TABLE tables ADD COLUMN bank_add INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE tables ADD COLUMN banks TEXT;
    """,
    # 17: friends and invitations (issue 62): who follows whom (friends follow each other),
    # when each player was last seen (the lobby's "online now", a friend's presence), the
    # invitations to a table (kept once accepted: they admit to a friends-only table; swept
    # after an hour) and tables open to the host's friends and the invited only
    """
    ALTER TABLE tables ADD COLUMN friends_only INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE follows (
        player_id {int64} NOT NULL REFERENCES players(id),
        followed_id {int64} NOT NULL REFERENCES players(id),
        created {real} NOT NULL,
        PRIMARY KEY (player_id, followed_id)
    );
    CREATE INDEX follows_followed ON follows(followed_id);
    CREATE TABLE presence (
        player_id {int64} PRIMARY KEY,
        seen {real} NOT NULL
    );
    CREATE INDEX presence_seen ON presence(seen);
    CREATE TABLE invites (
        code TEXT NOT NULL,
        from_id {int64} NOT NULL,
        to_id {int64} NOT NULL,
        created {real} NOT NULL,
        accepted INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (code, to_id)
    );
    CREATE INDEX invites_to ON invites(to_id, created);
    CREATE INDEX invites_created ON invites(created);
    """,
    # 18: profiles and achievements (issue 62): who sees an account's profile ('public',
    # 'friends' or 'nobody', `people.profiles.VISIBILITIES`), and per result whether the
    # player had help (1: the coach was on, or the computer made one of the seat's moves;
    # NULL: stored before, unknown): only unaided games earn achievements
    """
    ALTER TABLE accounts ADD COLUMN profile_visibility TEXT NOT NULL DEFAULT 'public';
    ALTER TABLE results ADD COLUMN assisted INTEGER;
    """,
    # 19: "your turn" by e-mail (issue 62): an account's address (confirmed by a one-time
    # link: the hash of its token and its expiry), its choices (your turn, invitations),
    # its language and its unsubscribe key; the mails sent per player, table and kind (at
    # most one per game per few hours); the confirmations sent per address (its hash: a
    # stranger's address is not mailed more than a few times a day)
    """
    CREATE TABLE emails (
        player_id {int64} PRIMARY KEY REFERENCES players(id),
        address TEXT NOT NULL,
        confirmed INTEGER NOT NULL DEFAULT 0,
        confirm_hash TEXT,
        confirm_expires {real},
        turns INTEGER NOT NULL DEFAULT 1,
        invites INTEGER NOT NULL DEFAULT 1,
        lang TEXT NOT NULL DEFAULT 'en',
        unsubscribe TEXT NOT NULL,
        updated {real} NOT NULL
    );
    CREATE INDEX emails_confirm ON emails(confirm_hash);
    CREATE TABLE mails_sent (
        player_id {int64} NOT NULL,
        code TEXT NOT NULL,
        kind TEXT NOT NULL,
        sent {real} NOT NULL,
        PRIMARY KEY (player_id, code, kind)
    );
    CREATE INDEX mails_sent_sent ON mails_sent(sent);
    CREATE TABLE confirmations_sent (
        address_hash TEXT NOT NULL,
        sent {real} NOT NULL
    );
    CREATE INDEX confirmations_sent_address ON confirmations_sent(address_hash, sent);
    """,
    # 20: tournaments (issue 62): a tournament (its code, creator, choices, state, round and
    # winner), its entrants by place (a person or a CPU level), and its matches by round,
    # each an ordinary table (``code``; '~...' while a process makes it) or a CPU match
    # played out by the server, with its winner's place and the match's totals
    """
    CREATE TABLE tournaments (
        code TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        creator_id {int64} NOT NULL REFERENCES players(id),
        rules TEXT NOT NULL,
        places INTEGER NOT NULL,
        best_of INTEGER NOT NULL,
        fill_level TEXT,               -- NULL: no CPU fills an empty place
        starts {real},                 -- NULL: when full
        seed {int64} NOT NULL,
        state TEXT NOT NULL,           -- 'open', 'running' or 'over'
        round INTEGER NOT NULL DEFAULT 0,
        winner_slot INTEGER,
        created {real} NOT NULL,
        updated {real} NOT NULL
    );
    CREATE INDEX tournaments_state ON tournaments(state, created);
    CREATE INDEX tournaments_creator ON tournaments(creator_id, state);
    CREATE TABLE tournament_entrants (
        code TEXT NOT NULL REFERENCES tournaments(code),
        slot INTEGER NOT NULL,
        kind TEXT NOT NULL,            -- 'human' or a CPU level
        player_id {int64},
        name TEXT NOT NULL,
        PRIMARY KEY (code, slot)
    );
    CREATE UNIQUE INDEX tournament_entrants_player ON tournament_entrants(code, player_id);
    CREATE INDEX tournament_entrants_of ON tournament_entrants(player_id);
    CREATE TABLE tournament_matches (
        code TEXT NOT NULL REFERENCES tournaments(code),
        round INTEGER NOT NULL,
        idx INTEGER NOT NULL,
        a_slot INTEGER NOT NULL,
        b_slot INTEGER,                -- NULL: a bye
        table_code TEXT,               -- the match's table; '~claim' while being made
        claimed {real},
        winner_slot INTEGER,
        a_total INTEGER,
        b_total INTEGER,
        PRIMARY KEY (code, round, idx)
    );
    CREATE INDEX tournament_matches_table ON tournament_matches(table_code);
    """,
    # 21: Swiss tournaments and the graded games (issue 62): a tournament's format
    # ('knockout', as every older one, or 'swiss', `people.swiss`; a drawn Swiss match has
    # ``winner_slot`` -1) and when it ended (a profile's date of a tournament won); per
    # result the errors the solver's review found in the seat's moves (`review.ERROR_LABELS`;
    # NULL: not graded, -1: could not be), graded once after the game ends, off the event
    # loop; the index finds the games still to grade (only unaided ones are graded)
    """
    ALTER TABLE tournaments ADD COLUMN format TEXT NOT NULL DEFAULT 'knockout';
    ALTER TABLE tournaments ADD COLUMN finished {real};
    ALTER TABLE results ADD COLUMN errors INTEGER;
    CREATE INDEX results_ungraded ON results(finished) WHERE errors IS NULL AND assisted = 0;
    """,
    # 22: the moves kept in their key's order (issue 60, seventh round). On SQLite a table
    # with a key of several columns was a rowid table and an index of that key: a move
    # wrote the table's last page and the index's page of its table, two pages of the log
    # (WAL frames) for one row. WITHOUT ROWID keeps the rows in the key's own tree: one
    # page a move, and a game's moves read in one range. PostgreSQL has no such choice
    # (the same table, copied once).
    """
    CREATE TABLE actions_by_key (
        code TEXT NOT NULL,
        idx INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        seat INTEGER NOT NULL,
        action INTEGER NOT NULL,
        regret {real},
        auto INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (code, idx, seq)
    ){without_rowid};
    INSERT INTO actions_by_key (code, idx, seq, seat, action, regret, auto)
        SELECT code, idx, seq, seat, action, regret, auto FROM actions;
    DROP TABLE actions;
    ALTER TABLE actions_by_key RENAME TO actions;
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)

# What differs between the two SQL dialects, in the migrations and the queries.
DIALECTS: dict[str, dict[str, str]] = {
    # SQLite: INTEGER PRIMARY KEY is the rowid (64-bit); REAL is 8 bytes; every INTEGER is
    # 64-bit. BEGIN IMMEDIATE takes the database's write lock, so FOR UPDATE has no place.
    "sqlite": {
        "pk": "INTEGER PRIMARY KEY",
        "real": "REAL",
        "int64": "INTEGER",
        "for_update": "",
        "without_rowid": " WITHOUT ROWID",
    },
    # PostgreSQL: REAL would be 4 bytes and INTEGER 32 bits (a table's seed has 62).
    "postgresql": {
        "pk": "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
        "real": "DOUBLE PRECISION",
        "int64": "BIGINT",
        "for_update": " FOR UPDATE",
        "without_rowid": "",
    },
}


def migration_sql(number: int, dialect: str) -> list[str]:
    """The statements of migration ``number`` (0-based) in ``dialect``."""
    text = MIGRATIONS[number].format(**DIALECTS[dialect])
    text = re.sub(r"--[^\n]*", "", text)  # comments out, so that ';' splits statements
    return [s.strip() for s in text.split(";") if s.strip()]
