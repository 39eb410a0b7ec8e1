"""The web server's wings (issue 47): every SQL statement and every connection in the
storage wing (``yahtzee_env/web/storage/``), reached through its named stores."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
import textwrap
from pathlib import Path

import pytest

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


EXPERIMENTS = PACKAGE.parent / "experiments"
# a storage's internals reached from outside: its private attributes, its raw connection
INTERNALS = re.compile(r"\bstorage\.(_\w+|db\b)|\._commit_pending\b")


def outside_the_wing() -> list[Path]:
    """The package's modules outside the storage wing, and the experiments (benchmarks
    reach the storage through its public methods too)."""
    package = [p for p in sorted(PACKAGE.rglob("*.py")) if STORAGE not in p.parents]
    return package + sorted(EXPERIMENTS.rglob("*.py"))


def where(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


def test_no_sql_outside_the_storage_wing():
    found = {
        where(p): hits
        for p in outside_the_wing()
        if (hits := sql_strings(p.read_text(encoding="utf-8")))
    }
    assert not found, f"SQL outside yahtzee_env/web/storage/: {found}"


def test_no_private_storage_call_outside_the_storage_wing():
    found = {
        where(p): hits
        for p in outside_the_wing()
        if (hits := private_calls(p.read_text(encoding="utf-8")))
    }
    assert not found, f"private storage calls outside yahtzee_env/web/storage/: {found}"


def test_no_storage_internals_outside_the_wing():
    """No private attribute of a storage, nor its raw connection, outside the wing (the
    experiments included: experiments/bench_move_path.py times the commits and runs the
    checkpoints through `SQLiteStorage.timed_commits` and `wal_checkpoint`)."""
    found = {
        where(p): hits
        for p in outside_the_wing()
        if (hits := [ln.strip() for ln in p.read_text().splitlines() if INTERNALS.search(ln)])
    }
    assert not found, f"storage internals outside yahtzee_env/web/storage/: {found}"
    assert INTERNALS.search("storage._commit_pending = timed")
    assert INTERNALS.search('storage.db.execute("PRAGMA page_size")')
    assert not INTERNALS.search("storage.tables.due(now)")


def test_the_move_path_benchmark_runs_on_public_storage_methods(tmp_path):
    """experiments/bench_move_path.py, a few moves (about a second)."""
    spec = importlib.util.spec_from_file_location(
        "bench_move_path", EXPERIMENTS / "bench_move_path.py"
    )
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = bench.main(["--tables", "4", "--moves", "40", "--checkpoint-every", "4"])
    assert out["moves"] == 40 and 0 < out["commit_us_per_move"] < out["cpu_us_per_move"]
    assert out["per_move"]["transactions"] > 0 and out["page_size"] > 0


def test_the_move_path_benchmark_runs_on_postgresql():
    """``bench_move_path.py --db local-postgres``: the same moves on a private PostgreSQL
    cluster, the commits timed through the base storage's `timed_commits`, no WAL counted."""
    pytest.importorskip("psycopg", reason="needs the postgres extra")
    from yahtzee_env.web.door.local_postgres import find_bin

    if find_bin() is None:
        pytest.skip("PostgreSQL's initdb / pg_ctl are not installed")
    spec = importlib.util.spec_from_file_location(
        "bench_move_path", EXPERIMENTS / "bench_move_path.py"
    )
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = bench.main(["--tables", "3", "--moves", "30", "--db", "local-postgres"])
    assert out["db"] == "postgresql" and out["moves"] == 30
    assert 0 < out["commit_us_per_move"] < out["cpu_us_per_move"] and out["wall_us_per_move"] > 0
    assert out["wal_frames_per_commit"] is None and out["per_move"]["transactions"] == 1


def test_the_move_path_benchmark_refuses_a_database_it_does_not_know(tmp_path, monkeypatch, capsys):
    """``--db`` that is neither sqlite, local-postgres nor a postgresql:// URL is an error
    naming it (not a SQLite file of that name made in the working folder)."""
    spec = importlib.util.spec_from_file_location(
        "bench_move_path", EXPERIMENTS / "bench_move_path.py"
    )
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        bench.main(["--tables", "1", "--moves", "1", "--db", "mysql://x"])
    assert "mysql://x" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


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


# ------------------------------------------------------------------ one style per door
def one_line(function) -> bool:
    """``function``'s body (its docstring aside) is one ``return`` of a call: the route
    hands the request to a named handler and does no work of its own."""
    node = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
    body = node.body[1:] if ast.get_docstring(node) is not None else node.body
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return False
    value = body[0].value
    value = value.value if isinstance(value, ast.Await) else value
    return isinstance(value, ast.Call)


def route_functions() -> dict[str, object]:
    """Every route of the server (the one list, `app.route_list`) and its function, the
    route's own body (under `routes.endpoint`'s reading and answering)."""
    from starlette.routing import Mount

    from yahtzee_env.web.door.app import route_list

    return {
        f"{' '.join(sorted(getattr(r, 'methods', None) or ['WS']))} {r.path}": inspect.unwrap(
            r.endpoint
        )
        for r in route_list(bench_stats=True)
        if not isinstance(r, Mount)
    }


def test_every_route_is_one_line_into_a_named_handler():
    routes = route_functions()
    assert len(routes) > 50 and "POST /api/tables/{code}/kick" in routes
    long = [name for name, function in routes.items() if not one_line(function)]
    assert not long, f"routes that do their own work (not one return of a call): {long}"


def test_the_route_rule_catches_a_route_at_work():
    async def at_work(ask, service):
        body = ask.body
        return await service.act(ask.code, body, ask.session)

    async def branching(ask, service):
        """A docstring is not work."""
        if ask.body:
            return {}
        return await service.act(ask.code, ask.body, ask.session)

    async def routed(ask, service):
        """A docstring is not work."""
        return await service.social.kick(ask.code, ask.body, ask.session)

    assert not one_line(at_work) and not one_line(branching) and one_line(routed)


def test_the_server_has_one_route_list():
    """No module of the door but `app` builds routes (a second list hides a door)."""
    door = WEB / "door"
    found = [
        p.name
        for p in door.glob("*.py")
        if p.name != "app.py" and re.search(r"\b(Route|WebSocketRoute|Mount)\(", p.read_text())
    ]
    assert not found, f"routes built outside door/app.py: {found}"


def test_the_socket_messages_reach_the_routes_handlers():
    """A table socket's intents are the `Service` methods its HTTP routes call."""
    from yahtzee_env.web.door.service import Service
    from yahtzee_env.web.door.sockets import TableSocket

    changes = TableSocket.CHANGES  # each answered by the `Service` method of its name
    assert changes and "act" in changes
    routes = inspect.getsource(importlib.import_module("yahtzee_env.web.door.routes"))
    for method in changes:
        assert callable(getattr(Service, method))
        assert f"service.{method}(ask.code, ask.body, ask.session)" in routes
