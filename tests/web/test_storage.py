"""The storage interface on both backends (issue 20): SQLite and a real PostgreSQL server
(the ``postgres_server`` fixture), the same calls and the same answers."""

from __future__ import annotations

import threading
import time

import pytest

from yahtzee_env.web.storage import (
    DIALECTS,
    MIGRATIONS,
    SCHEMA_VERSION,
    PostgresStorage,
    SchemaError,
    SQLiteStorage,
    describe_target,
    migration_sql,
    open_storage,
)


@pytest.fixture
def storage(db):
    """The storage of ``db``: each test on both backends."""
    s = open_storage(db)
    yield s
    s.close()


def table_row(code: str, **extra) -> dict:
    row = {
        "code": code,
        "rules": "official",
        "seed": 2**62 - 1,  # a seed needs 62 bits: PostgreSQL's INTEGER would not hold it
        "online": False,
        "match": False,
        "coach": False,
        "fill_level": "easy",
        "started": True,
        "first": 1,
    }
    return row | extra


SEATS = [
    {"seat": 0, "kind": "human", "name": "Ada", "player_id": None, "token_hash": "h0"},
    {"seat": 1, "kind": "easy", "name": "easy", "player_id": None, "token_hash": None},
]


def test_open_storage_picks_the_backend(storage):
    expected = PostgresStorage if storage.dialect == "postgresql" else SQLiteStorage
    assert isinstance(storage, expected)
    assert storage.multi_process == (storage.dialect == "postgresql")
    assert storage.version == SCHEMA_VERSION == len(MIGRATIONS)
    assert storage.check_version() == SCHEMA_VERSION


def test_a_table_round_trips(storage):
    pid = storage.players.create_player("Ada", "secret-token")
    assert storage.players.player_by_token("secret-token") == {"id": pid, "name": "Ada"}
    assert storage.players.player_by_token("other") is None
    storage.tables.create_table(
        table_row("ABCDEFGH", host_player=pid), [SEATS[0] | {"player_id": pid}, SEATS[1]]
    )
    storage.tables.append_actions("ABCDEFGH", 0, 0, [(1, 7, None), (1, 40, None), (0, 3, 0.25)])
    row = storage.tables.load_table("ABCDEFGH")
    assert row["seed"] == 2**62 - 1 and row["rev"] == 0 and row["started"] == 1
    assert [s["kind"] for s in row["seats"]] == ["human", "easy"]
    assert row["games"] == [{"code": "ABCDEFGH", "idx": 0, "match_no": 0, "first": 1}]
    assert row["actions"] == {0: [(1, 7, None), (1, 40, None), (0, 3, 0.25)]}
    assert storage.tables.open_tables(player_id=pid) == 1
    storage.tables.append_actions(
        "ABCDEFGH",
        0,
        3,
        [(1, 35, None)],
        [
            {
                "player_id": pid,
                "seat": 0,
                "score": 201,
                "outcome": "win",
                "yahtzees": 1,
                "upper_bonus": 1,
                "opponents": "easy",
                "online": False,
            }
        ],
        over=True,
    )
    assert storage.tables.open_tables(player_id=pid) == 0
    (result,) = storage.players.results_of(pid)
    assert result["score"] == 201 and result["outcome"] == "win" and result["code"] == "ABCDEFGH"
    changes = storage.tables.table_changes("ABCDEFGH", 0, 2)
    assert changes["actions"] == [(0, 3, 0.25), (1, 35, None)] and changes["games"] == 1
    storage.tables.update_seat("ABCDEFGH", SEATS[1] | {"name": "renamed"})  # an upsert
    assert storage.tables.load_table("ABCDEFGH")["seats"][1]["name"] == "renamed"


def test_lock_table_moves_rev_on_only_when_the_block_wrote(storage):
    storage.tables.create_table(table_row("LOCKLOCK"), SEATS)
    with storage.lock_table("LOCKLOCK") as lock:
        assert lock.rev == 0
    assert lock.rev == 0 and storage.tables.table_rev("LOCKLOCK") == 0  # a read-only block
    with storage.lock_table("LOCKLOCK") as lock:
        storage.tables.append_actions("LOCKLOCK", 0, 0, [(1, 7, None)])
        storage.tables.start_game("LOCKLOCK", 1, 0, 0)
    assert lock.rev == 1 and storage.tables.table_rev("LOCKLOCK") == 1  # one change, one rev
    with pytest.raises(RuntimeError, match="boom"), storage.lock_table("LOCKLOCK"):
        storage.tables.append_actions("LOCKLOCK", 1, 0, [(0, 7, None)])
        raise RuntimeError("boom")
    assert storage.tables.table_rev("LOCKLOCK") == 1  # rolled back: nothing written
    assert 1 not in storage.tables.load_table("LOCKLOCK")["actions"]
    with storage.lock_table("NOSUCHTB") as lock:
        assert lock.rev is None


def test_lock_table_serializes_two_writers(storage):
    """Two threads (on PostgreSQL: two connections, as two processes would have) each read
    the rev under the lock and write the next action: neither is lost or doubled."""
    storage.tables.create_table(table_row("RACERACE"), SEATS)
    errors = []

    def writer(n: int) -> None:
        try:
            for _ in range(n):
                with storage.lock_table("RACERACE") as lock:
                    seq = len(storage.tables.table_changes("RACERACE", 0, 0)["actions"])
                    assert seq == lock.rev
                    storage.tables.append_actions("RACERACE", 0, seq, [(0, 7, None)])
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=writer, args=(15,)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert storage.tables.table_rev("RACERACE") == 30
    assert len(storage.tables.load_table("RACERACE")["actions"][0]) == 30


def test_expire_deletes_idle_tables_but_keeps_results(storage):
    pid = storage.players.create_player("Bo", "tok")
    storage.tables.create_table(table_row("OLDOLDOL", host_player=pid), SEATS)
    storage.tables.create_table(table_row("NEWNEWNE"), SEATS)
    storage.tables.append_actions(
        "OLDOLDOL",
        0,
        0,
        [(1, 7, None)],
        [
            {
                "player_id": pid,
                "seat": 0,
                "score": 99,
                "outcome": "loss",
                "yahtzees": 0,
                "upper_bonus": 0,
                "opponents": "easy",
                "online": False,
            }
        ],
        over=True,
    )
    later = time.time() + 7200
    assert storage.tables.expire(86_400, 3600, keep={"NEWNEWNE"}, now=later) == ["OLDOLDOL"]
    assert storage.tables.load_table("OLDOLDOL") is None and storage.tables.table_exists("NEWNEWNE")
    assert [r["score"] for r in storage.players.results_of(pid)] == [99]


def test_a_newer_schema_is_refused(storage):
    with storage.transaction() as conn:
        storage._write_version(conn, SCHEMA_VERSION + 1)
    with pytest.raises(SchemaError, match="newer"):
        storage.check_version()
    with pytest.raises(SchemaError, match="newer"):
        storage.migrate()


def test_the_migrations_are_one_text_in_two_dialects():
    for number in range(SCHEMA_VERSION):
        sqlite, pg = migration_sql(number, "sqlite"), migration_sql(number, "postgresql")
        assert len(sqlite) == len(pg) > 0
        assert not any("{" in s for s in sqlite + pg)  # every dialect word filled in
    first = " ".join(migration_sql(0, "postgresql"))
    assert "BIGINT GENERATED BY DEFAULT AS IDENTITY" in first and "DOUBLE PRECISION" in first
    assert "id INTEGER PRIMARY KEY" in " ".join(migration_sql(0, "sqlite"))  # the rowid
    assert set(DIALECTS) == {"sqlite", "postgresql"}


def test_a_url_is_shown_without_its_password():
    url = "postgresql://yahtzee:s3cret@db:5432/yahtzee"
    assert describe_target(url) == "postgresql://yahtzee:***@db:5432/yahtzee"
    assert "s3cret" not in describe_target(url)


def test_the_moves_move_into_their_keys_tree_and_none_is_lost(tmp_path):
    """Migration 22 (issue 60): a database of the 21 before it, with moves stored, reaches the
    last; every move is still there, and on SQLite the moves are kept in their key's own
    tree (WITHOUT ROWID: one page of the log a move, not the table's and its index's)."""
    import sqlite3

    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    for number in range(21):
        for statement in migration_sql(number, "sqlite"):
            conn.execute(statement)
    conn.execute("PRAGMA user_version=21")
    moves = [("ABCD", 0, seq, seq % 2, 40 + seq, 0.5 if seq == 3 else None, seq == 5)
             for seq in range(8)] + [("EFGH", 1, 0, 0, 7, None, 0)]  # fmt: skip
    conn.executemany(
        "INSERT INTO actions (code, idx, seq, seat, action, regret, auto) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        moves,
    )
    conn.close()
    storage = open_storage(path)
    try:
        assert storage.version == SCHEMA_VERSION
        rows = storage.db.execute(
            "SELECT code, idx, seq, seat, action, regret, auto FROM actions ORDER BY code, seq"
        ).fetchall()
        assert [tuple(r) for r in rows] == [(*m[:6], int(m[6])) for m in moves]
        sql = storage.db.execute("SELECT sql FROM sqlite_master WHERE name = 'actions'")
        assert sql.fetchone()[0].rstrip().endswith("WITHOUT ROWID")
        with pytest.raises(sqlite3.IntegrityError):  # the key still holds
            storage.db.execute(
                "INSERT INTO actions (code, idx, seq, seat, action) VALUES ('ABCD', 0, 3, 0, 1)"
            )
    finally:
        storage.close()
    assert "WITHOUT ROWID" not in " ".join(migration_sql(21, "postgresql"))
