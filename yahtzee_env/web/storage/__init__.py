"""The storage wing: every SQL statement and every connection of the web server.

`base` (`Database`: connections, transactions, group commit, table locks, LISTEN/NOTIFY,
migrations), `schema` (the migrations, the two dialects), `stores` (`Storage`: the database
and its named stores), one store per concern (`players`, `accounts`, `logins`, `tables`,
`people`, `friends`, `queue`, `ratings`, `profiles`, `mail`, `tournaments`: reached as
``storage.players``, ...), and the backends: `sqlite` (the embedded default) and `postgres`
(any number of server processes).
Nothing outside this folder writes SQL or touches a connection (``tests/web/test_wings.py``).
"""

from __future__ import annotations

import os

from yahtzee_env.web.storage.base import (
    SchemaError,
    StaleCopy,
    TableLock,
    Trips,
    default_db_path,
    describe_target,
    is_postgres_url,
    token_hash,
)
from yahtzee_env.web.storage.postgres import POSTGRES_HINT, PostgresStorage
from yahtzee_env.web.storage.schema import DIALECTS, MIGRATIONS, SCHEMA_VERSION, migration_sql
from yahtzee_env.web.storage.sqlite import SQLiteStorage
from yahtzee_env.web.storage.stores import Storage


def open_storage(target: str | os.PathLike | None = None, *, migrate: bool = True) -> Storage:
    """The storage at ``target``: a ``postgresql://`` URL, else a SQLite file path (None:
    `default_db_path`)."""
    if target is None:
        target = default_db_path()
    if is_postgres_url(target):
        return PostgresStorage(str(target), migrate=migrate)
    return SQLiteStorage(target, migrate=migrate)


__all__ = [
    "DIALECTS",
    "MIGRATIONS",
    "POSTGRES_HINT",
    "SCHEMA_VERSION",
    "PostgresStorage",
    "SQLiteStorage",
    "SchemaError",
    "StaleCopy",
    "Storage",
    "TableLock",
    "Trips",
    "default_db_path",
    "describe_target",
    "is_postgres_url",
    "migration_sql",
    "open_storage",
    "token_hash",
]
