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


def test_module_level_imports_have_no_cycle():
    graph = {module_name(p): imports(p, top_level_only=True) for p in SOURCES}
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt) :], nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if state.get(nxt) is None:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])


def test_a_lower_layer_importing_a_higher_one_is_caught(tmp_path):
    """The checker itself: an upward import written into a copy is found."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from yahtzee_env.web import app\n")
    assert "yahtzee_env.web.app" in imports(bad)
    bad.write_text('LAZY = {"serve": "yahtzee_env.commands.serve"}\n')
    assert "yahtzee_env.commands.serve" in imports(bad)
    assert RANK[room_of("yahtzee_env.web.app")] > RANK[room_of("yahtzee_env.game.engine")]
