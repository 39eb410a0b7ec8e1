"""The web server's wings (issue 47): every SQL statement and every connection in the
storage wing (``yahtzee_env/web/storage/``), reached through its named stores."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yahtzee_env

PACKAGE = Path(yahtzee_env.__file__).parent
WEB = PACKAGE / "web"
STORAGE = WEB / "storage"

# An SQL statement in a string: the words a statement starts with, in capitals
SQL = re.compile(
    r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(UNIQUE\s+)?"
    r"(TABLE|INDEX)|ALTER\s+TABLE|DROP\s+TABLE|PRAGMA\s+\w+|BEGIN\s+IMMEDIATE|pg_notify|LISTEN\s)",
    re.S,
)
# A private method of the storage: its transactions, queries, connections
PRIVATE = re.compile(
    r"\.(_tx|_query|_exec|_exec_all|_write_all|_write_each|_reading|_connection|_transaction"
    r"|_joined)\(|\.transaction\(\)"
)


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of ``tree`` (prose: they may name a statement)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.add(id(value))
    return found


def sql_strings(source: str) -> list[str]:
    """The string literals of ``source`` (docstrings aside) that hold an SQL statement."""
    tree = ast.parse(source)
    prose = docstrings(tree)
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in prose
        and SQL.search(node.value)
    ]


def private_calls(source: str) -> list[str]:
    """The lines of ``source`` that call a private method of the storage."""
    return [line.strip() for line in source.splitlines() if PRIVATE.search(line)]


def outside_the_wing() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if STORAGE not in p.parents]


def test_no_sql_outside_the_storage_wing():
    found = {
        str(p.relative_to(PACKAGE)): hits
        for p in outside_the_wing()
        if (hits := sql_strings(p.read_text(encoding="utf-8")))
    }
    assert not found, f"SQL outside yahtzee_env/web/storage/: {found}"


def test_no_private_storage_call_outside_the_storage_wing():
    found = {
        str(p.relative_to(PACKAGE)): hits
        for p in outside_the_wing()
        if (hits := private_calls(p.read_text(encoding="utf-8")))
    }
    assert not found, f"private storage calls outside yahtzee_env/web/storage/: {found}"


def test_the_wing_holds_the_sql():
    """The checkers see the statements where they are (so that they can fail)."""
    inside = [p for p in STORAGE.rglob("*.py") if sql_strings(p.read_text(encoding="utf-8"))]
    assert {p.name for p in inside} >= {"schema.py", "tables.py", "queue.py", "ratings.py"}


def test_the_checkers_catch_sql_and_private_calls():
    bad = (
        '"""A docstring may say SELECT code FROM tables."""\n'
        "def f(storage, code):\n"
        '    rows = storage._query("SELECT code FROM tables WHERE code = ?", (code,))\n'
        '    storage._tx([(f"DELETE FROM {name} WHERE code = ?", (code,))])\n'
        "    with storage.transaction() as conn:\n"
        "        pass\n"
    )
    assert sql_strings(bad) == ["SELECT code FROM tables WHERE code = ?", "DELETE FROM "]
    assert len(private_calls(bad)) == 3
    assert sql_strings('"""SELECT x FROM y"""\nx = "select a table"\n') == []
