"""The package's folders are its layers (issue 16): a module imports only from its own layer
or from lower ones, and the import graph has no cycle. Every import counts, those inside
functions too, so that no upward dependency hides in a lazy import."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yahtzee_env

PACKAGE = Path(yahtzee_env.__file__).parent

# Lowest first. A module may import its own layer and any layer before it.
LAYERS: list[tuple[str, ...]] = [
    ("fileio",),  # atomic writes and bounded reads: no project imports
    ("game",),  # dice, rules, engine, best-of-five, observation, words, CPU moves: no Gymnasium
    ("solver",),  # the exact solver, its oracle and the coach
    ("policies",),  # baselines, the model format and files, the one resolver, the levels
    ("envs",),  # Yahtzee-v0, the vector env, YahtzeeVs-v0, PettingZoo
    ("jax",),  # Yahtzee-v0 in JAX (the optional jax extra): imported by no other room
    ("analysis",),  # evaluation, tournaments, benchmarks, Ray
    ("__init__",),  # the public API (re-exports, some lazy) and the env registration
    ("play",),  # the terminal game and its coach
    ("web",),  # yahtzee serve
    ("commands", "__main__"),  # the CLI
]
RANK = {room: rank for rank, rooms in enumerate(LAYERS) for room in rooms}
PURE = ("game", "solver")  # rooms that must not import Gymnasium
MODULE_STRING = re.compile(r"yahtzee_env(\.[a-z_]+)+(:[A-Za-z_]+)?")


def room_of(module: str) -> str:
    """The top folder (or top module) of ``yahtzee_env.a.b``; ``__init__`` for the package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, top_level_only: bool = False) -> set[str]:
    """Project modules imported by ``path`` (resolving ``from yahtzee_env.x import y`` to the
    module ``yahtzee_env.x.y`` when that is a module). A string that names a module
    (``"yahtzee_env.envs.yahtzee:YahtzeeEnv"``, a lazy re-export) counts as an import."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else ast.walk(tree)
    found: set[str] = set()
    loggers = {  # logging.getLogger("yahtzee_env.web") names a logger, not an import
        id(arg)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "attr", getattr(node.func, "id", None)) == "getLogger"
        for arg in node.args
    }
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                if _is_module(candidate):
                    found.add(candidate)
        elif (
            not top_level_only
            and isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in loggers
            and MODULE_STRING.fullmatch(node.value)
            and _is_module(node.value.split(":")[0])
        ):
            found.add(node.value.split(":")[0])
    return {m for m in found if m == "yahtzee_env" or m.startswith("yahtzee_env.")}


def _is_module(name: str) -> bool:
    rel = Path(*name.split(".")[1:])
    return (PACKAGE / rel).with_suffix(".py").is_file() or (PACKAGE / rel / "__init__.py").is_file()


SOURCES = sorted(PACKAGE.rglob("*.py"))


def test_every_module_has_a_layer():
    rooms = {room_of(module_name(p)) for p in SOURCES}
    assert rooms <= set(RANK), f"modules outside every layer: {sorted(rooms - set(RANK))}"


def test_no_module_imports_a_higher_layer():
    upward = []
    for path in SOURCES:
        me = module_name(path)
        for other in imports(path):
            if RANK[room_of(other)] > RANK[room_of(me)]:
                upward.append(f"{me} -> {other}")
    assert not upward, "imports from a higher layer:\n" + "\n".join(sorted(upward))


def test_the_engine_and_solver_import_no_gymnasium():
    for path in SOURCES:
        if room_of(module_name(path)) in PURE:
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else []
                )
                assert not any(n.split(".")[0] in ("gymnasium", "pettingzoo") for n in names), (
                    f"{module_name(path)} imports {names}"
                )


def import_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """The first cycle of ``graph`` (module -> the modules it imports), or None."""
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done

    def visit(node: str, stack: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if state.get(nxt) is None:
                found = visit(nxt, [*stack, nxt])
                if found:
                    return found
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [node])
            if found:
                return found
    return None


def _third_party_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_only_the_jax_room_imports_jax():
    """The core install is numpy + gymnasium (issue 51): JAX and optax are imported by
    ``yahtzee_env/jax/`` only, and nothing else in the package imports that room, lazily
    either (the JAX engine, ``agents/jax/``, is the training package's)."""
    for path in SOURCES:
        me = module_name(path)
        if room_of(me) == "jax":
            continue
        assert not _third_party_imports(path) & {"jax", "jaxlib", "optax", "flax"}, me
        assert not any(room_of(m) == "jax" for m in imports(path)), me


def test_imports_have_no_cycle():
    """No cycle among the modules' imports, lazy ones (inside functions, or a module named
    in a string) included: two modules held together by an import inside a function are a
    cycle all the same."""
    graph = {module_name(p): imports(p) for p in SOURCES}
    cycle = import_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_a_lower_layer_importing_a_higher_one_is_caught(tmp_path):
    """The checker itself: an upward import written into a copy is found."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from yahtzee_env.web.door import app\n")
    assert "yahtzee_env.web.door.app" in imports(bad)
    bad.write_text('LAZY = {"serve": "yahtzee_env.commands.serve"}\n')
    assert "yahtzee_env.commands.serve" in imports(bad)
    bad.write_text('import logging\nlog = logging.getLogger("yahtzee_env.web")\n')
    assert imports(bad) == set()  # a logger's name is no import
    assert RANK[room_of("yahtzee_env.web.door.app")] > RANK[room_of("yahtzee_env.game.engine")]


def test_a_cycle_held_by_an_import_inside_a_function_is_caught(tmp_path):
    """The checker itself: two modules that import each other, one of them inside a
    function only (as web/rooms.py and web/review.py once did), are a cycle."""
    pkg = tmp_path / "yahtzee_env"
    pkg.mkdir()
    (pkg / "a.py").write_text("from yahtzee_env.b import g\n")
    (pkg / "b.py").write_text("def g():\n    from yahtzee_env.a import f\n")
    graph = {f"yahtzee_env.{p.stem}": imports(p) for p in (pkg / "a.py", pkg / "b.py")}
    assert import_cycle(graph) == ["yahtzee_env.a", "yahtzee_env.b", "yahtzee_env.a"]


# ------------------------------------------------------------------ docs/layout.md
ROOT = PACKAGE.parent
LAYOUT = ROOT / "docs" / "layout.md"
FILE_NAME = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.(?:py|sh|js))\b")


def documented_files(text: str) -> set[str]:
    """The files the tree of docs/layout.md names, as paths from the repository's root: a
    line at the left margin opens a top folder (``agents/``), one indented by two a folder
    or file of ``yahtzee_env/`` (``  web/``, ``  fileio.py``); deeper lines go on with the
    folder above. A name with a slash that starts with a top folder (``tests/x.py``) is read
    from the root, any other from the line's folder."""
    block = text.split("```")[1].split("\n", 1)[1]
    named: set[str] = set()
    folder = ""
    for line in block.splitlines():
        head = line.split(maxsplit=1)[0] if line.strip() else ""
        if line[:1].strip():  # a top folder
            folder = head if head.endswith("/") else ""
        elif line[:2] == "  " and line[2:3].strip():  # inside yahtzee_env/
            folder = "yahtzee_env/" + (head if head.endswith("/") else "")
        for name in FILE_NAME.findall(line):
            top = name.split("/")[0]
            named.add(name if "/" in name and (ROOT / top).is_dir() else folder + name)
    return named


def modules_to_document() -> set[str]:
    """What docs/layout.md must name: every module of the package (but the subpackages'
    ``__init__.py``, which only hand names on), of ``agents/`` and its wings (``run/``,
    ``sb3/``, ``jax/``) and of ``experiments/``, and every script of the page."""
    package = {p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py" or p.parent == PACKAGE}
    agents = {p for p in (ROOT / "agents").rglob("*.py") if p.name != "__init__.py"}
    experiments = {p for p in (ROOT / "experiments").iterdir() if p.suffix in (".py", ".sh")}
    page = set((PACKAGE / "web" / "static").rglob("*.js"))
    return {p.relative_to(ROOT).as_posix() for p in package | agents | experiments | page}


def test_the_layout_page_names_every_module_and_no_other():
    named = documented_files(LAYOUT.read_text(encoding="utf-8"))
    missing = modules_to_document() - named
    assert not missing, f"docs/layout.md does not name: {sorted(missing)}"
    stale = sorted(p for p in named if not (ROOT / p).is_file())
    assert not stale, f"docs/layout.md names files that do not exist: {stale}"


def test_the_layout_reader_places_names_in_their_folders():
    """The checker itself, on a small tree in the page's shape."""
    text = (
        "```\nyahtzee_env/\n  fileio.py   atomic writes\n  web/        app.py tables.py\n"
        "              static/js/main.js\nagents/     train.py\n                 config.py\n"
        "examples/   each run by tests/test_examples.py\n```\n"
    )
    assert documented_files(text) == {
        "yahtzee_env/fileio.py",
        "yahtzee_env/web/app.py",
        "yahtzee_env/web/tables.py",
        "yahtzee_env/web/static/js/main.js",
        "agents/train.py",
        "agents/config.py",
        "tests/test_examples.py",
    }
