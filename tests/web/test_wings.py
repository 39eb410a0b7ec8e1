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


# ------------------------------------------------------------------ the maps
NAMED = re.compile(r"(?<!`)`([a-z_]+)`(?!`)")  # `module` in a docstring (``code`` is not)
MAX_METHODS = 40  # a class past this is a part waiting for a name
MAX_FUNCTION_LINES = 80


def wing_map(folder: Path) -> set[str]:
    """The modules and folders a package's ``__init__.py`` docstring names."""
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8")))
    return set(NAMED.findall(doc or ""))


def test_each_wing_names_what_it_holds():
    """Each folder's ``__init__.py`` names every module and folder in it, and no other."""
    folders = [WEB, *sorted(p.parent for p in WEB.glob("*/__init__.py"))]
    assert {p.name for p in folders[1:]} == {"door", "people", "storage", "tables"}
    for folder in folders:
        held = {p.stem for p in folder.glob("*.py") if p.name != "__init__.py"}
        held |= {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
        assert wing_map(folder) == held, folder.relative_to(PACKAGE)


def test_the_page_names_its_modules():
    """``static/js/main.js``'s opening comment names every module of the page."""
    js = WEB / "static" / "js"
    head = (js / "main.js").read_text(encoding="utf-8").split("\nimport", 1)[0]
    named = set(re.findall(r"([a-z_]+)\.js", head))
    assert named == {p.stem for p in js.glob("*.js")} - {"main"}


def classes_and_functions():
    for path in sorted(WEB.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            yield path.relative_to(WEB), node


def test_no_class_of_the_web_server_holds_over_40_methods():
    big = [
        f"{path}:{node.name} ({n})"
        for path, node in classes_and_functions()
        if isinstance(node, ast.ClassDef)
        and (n := sum(isinstance(b, ast.FunctionDef | ast.AsyncFunctionDef) for b in node.body))
        > MAX_METHODS
    ]
    assert not big, f"classes over {MAX_METHODS} methods: {big}"


def test_no_function_of_the_web_server_is_over_80_lines():
    long = [
        f"{path}:{node.name} ({lines})"
        for path, node in classes_and_functions()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (lines := node.end_lineno - node.lineno + 1) > MAX_FUNCTION_LINES
    ]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"
