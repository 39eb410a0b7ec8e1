"""Shared fixtures: a private PostgreSQL server for the tests that need one (issue 20).

``postgres_server`` starts one cluster for the session (Debian's initdb and pg_ctl, on
127.0.0.1 with a free port, in a temporary folder; stopped at the end). A test that needs it
where the binaries or psycopg are missing fails and says so: it is never skipped in silence.
``pg_url`` is a fresh empty database per test.
"""

from __future__ import annotations

import itertools

import pytest

_numbers = itertools.count()


@pytest.fixture(scope="session")
def postgres_server():
    from yahtzee_env.web.door.local_postgres import LocalPostgres, find_bin

    if find_bin() is None:
        from yahtzee_env.web.door.local_postgres import MISSING

        pytest.fail(MISSING, pytrace=False)
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ModuleNotFoundError as err:
        pytest.fail(
            f"{err.name} is missing: the PostgreSQL tests need the 'postgres' extra "
            "(pip install -e '.[dev]' installs it)",
            pytrace=False,
        )
    server = LocalPostgres(durable=False).start()
    yield server
    server.stop()


@pytest.fixture
def pg_url(postgres_server):
    return postgres_server.create_database(f"t{next(_numbers)}")
