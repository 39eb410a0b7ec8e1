"""The training package's wings (issue 59), as ``tests/web/test_wings.py`` holds the web
server's: every file of a run is written in the run wing (``agents/run/``), which stands below
both engines (``agents/sb3/``, ``agents/jax/``); an engine hands the run its objects (a model,
its state's arrays) and writes no file itself. AST-based: lazy imports and writes inside
functions count."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AGENTS = ROOT / "agents"
RUN = AGENTS / "run"
ENGINES = (AGENTS / "sb3", AGENTS / "jax")
# What picks or starts an engine: it writes nothing either
ENTRY = (AGENTS / "train.py", AGENTS / "ppo_jax.py", ROOT / "yahtzee_env" / "commands" / "train.py")

# The modules of agents/ outside the wings that write files, and what they write (no file of a
# run: their writes name no run path, checked below)
WRITERS = {
    "export.py": "an exported model (ONNX) where `yahtzee export --out` says",
    "curves.py": "the learning curves' CSV and figure",
    "sweep.py": "a sweep's summary (sweep.yaml, results.json and .csv, best.yaml, its plot)",
    "seeds.py": "the seeds' summary beside the runs (<name>-seeds.json)",
    "model_based.py": "the model-based learner's own folder (config.json, curve.jsonl, value.npz)",
}

# Calls that write (or remove) a file, by the name called (the run wing's own writers, called
# as ``folder.write_model(...)``, are how an engine writes through it, and are not listed)
WRITE_CALLS = {
    "atomic_write", "atomic_path", "savez", "savez_compressed", "save", "write_text",
    "write_bytes", "savefig", "to_csv", "mkdir", "unlink", "rmtree", "rename", "symlink_to",
    "save_policy", "save_turn_value", "export_npz", "export_onnx",
}  # fmt: skip
SHUTIL = {"copy", "copy2", "copyfile", "copytree", "move"}  # as shutil.copy(...): not ndarray.copy
DUMPS = {"dump", "safe_dump"}  # a file's writer with a stream (yaml.safe_dump(x) is a string)
# A run path: the run folder's object, or one of its paths
RUN_PATH = re.compile(r"\bRunPaths\b|\bpaths\.\w+|\brun_dir\b")


def _called(node: ast.Call) -> str | None:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def _writes_with_open(node: ast.Call) -> bool:
    """``open(path, "w")``, ``path.open("a")``: a mode that writes, appends or creates."""
    at = 0 if isinstance(node.func, ast.Attribute) else 1
    mode = node.args[at] if len(node.args) > at else None
    mode = next((k.value for k in node.keywords if k.arg == "mode"), mode)
    if mode is None:
        return False
    text = mode.value if isinstance(mode, ast.Constant) else ast.unparse(mode)
    return isinstance(text, str) and any(c in text for c in "wax+")


def writes(source: str) -> list[str]:
    """The calls of ``source`` that write a file, each as its source text."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = _called(node)
        streamed = len(node.args) > 1 or any(k.arg == "stream" for k in node.keywords)
        shutil = isinstance(node.func, ast.Attribute) and ast.unparse(node.func.value) == "shutil"
        if (
            name in WRITE_CALLS
            or (name in SHUTIL and shutil)
            or (name == "open" and _writes_with_open(node))
            or (name in DUMPS and streamed)
        ):
            found.append(ast.unparse(node))
    return found


def where(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def in_folder(path: Path, folder: Path) -> bool:
    return folder in path.parents


def outside_the_wings() -> list[Path]:
    """The modules of agents/ in no wing (not run/, sb3/ or jax/)."""
    wings = (RUN, *ENGINES)
    return [p for p in sorted(AGENTS.rglob("*.py")) if not any(in_folder(p, w) for w in wings)]


def test_the_engines_write_no_file():
    """The engines, the engine picker and the train command hand the run wing what to write."""
    paths = [p for engine in ENGINES for p in sorted(engine.rglob("*.py"))] + list(ENTRY)
    found = {where(p): hits for p in paths if (hits := writes(p.read_text(encoding="utf-8")))}
    assert not found, f"files written outside agents/run/ by an engine: {found}"


def test_outside_the_wings_only_the_named_modules_write():
    found = {p.name for p in outside_the_wings() if p not in ENTRY and writes(p.read_text("utf-8"))}
    assert found == set(WRITERS), f"writers outside the wings: {sorted(found)}"


def test_no_run_path_is_written_outside_the_run_wing():
    """Every module of agents/ but the run wing's, and the train command: no write names a
    run path (`RunPaths`, ``paths.<file>``, ``run_dir``)."""
    paths = [p for p in sorted(AGENTS.rglob("*.py")) if not in_folder(p, RUN)] + list(ENTRY)
    found = {
        where(p): hits
        for p in paths
        if (hits := [w for w in writes(p.read_text("utf-8")) if RUN_PATH.search(w)])
    }
    assert not found, f"run files written outside agents/run/: {found}"


def test_the_run_wing_holds_the_writes():
    """The checker sees the run's writes where they are (so that it can fail)."""
    held = " ".join(writes((RUN / "folder.py").read_text(encoding="utf-8")))
    for call in ("atomic_write(paths.config", "open(paths.evals, 'a')", "model.save(f)",
                 "np.savez(buffer", "save_policy(", "shutil.rmtree(path)"):  # fmt: skip
        assert call in held, call


def test_the_checker_catches_writes():
    engine = (
        '"""A docstring may say open(path, "w")."""\n'
        "def checkpoint(model, paths, arrays, f, data):\n"
        '    with open(paths.meta, "w") as out:\n'
        "        json.dump(data, out)\n"
        '    paths.evals.open("a")\n'
        "    np.savez(paths.checkpoints / 'x.npz', **arrays)\n"
        "    torch.save(model.state_dict(), f)\n"
        "    model.save(paths.best / 'model.zip')\n"
        "    atomic_write(paths.init, yaml.safe_dump(data))\n"
        "    shutil.copy(f, paths.final)\n"
    )
    found = writes(engine)
    assert len(found) == 8, found
    assert all(RUN_PATH.search(w) for w in found if "torch" not in w and "dump" not in w)
    reads = "open(path)\nopen(path, 'rb')\nyaml.safe_dump(data)\nlogger.dump(step)\nx.copy()\n"
    assert writes(reads) == []


# ------------------------------------------------------------------ the wings' order
def _module(path: Path) -> tuple[str, ...]:
    parts = path.relative_to(AGENTS).with_suffix("").parts
    return parts[:-1] if parts[-1] == "__init__" else parts


def _file(parts: tuple[str, ...]) -> Path | None:
    for path in (
        AGENTS.joinpath(*parts).with_suffix(".py"),
        AGENTS.joinpath(*parts, "__init__.py"),
    ):
        if parts and path.is_file():
            return path
    return None


def agents_imports(path: Path) -> set[Path]:
    """The files of agents/ that ``path`` imports (relative or ``yahtzee_agents.``, inside
    functions too; ``from . import x`` and ``from .run import folder`` name modules)."""
    me = _module(path)
    package = me if path.name == "__init__.py" else me[:-1]
    found: set[Path] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
            elif (node.module or "").split(".")[0] == "yahtzee_agents":
                base = ()
                node = ast.ImportFrom(node.module.split(".", 1)[1] if "." in node.module
                                      else None, node.names, 0)  # fmt: skip
            else:
                continue
            parts = (*base, *(node.module.split(".") if node.module else ()))
            if target := _file(parts):
                found.add(target)
            for alias in node.names:
                if sub := _file((*parts, alias.name)):
                    found.add(sub)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = tuple(alias.name.split(".")[1:])
                if alias.name.startswith("yahtzee_agents.") and (target := _file(parts)):
                    found.add(target)
    return found - {path}


def wing_of(path: Path) -> str:
    for wing in (RUN, *ENGINES):
        if in_folder(path, wing):
            return wing.name
    return path.name


def test_the_run_wing_stands_below_both_engines():
    """The run wing imports the config only (of agents/); the config imports nothing of the
    package; the engines import the run wing and the package's lower rooms, never each other
    nor the rooms that use them; only `yahtzee_agents.train` picks an engine."""
    graph = {p: agents_imports(p) for p in sorted(AGENTS.rglob("*.py"))}
    config = AGENTS / "config.py"
    assert graph[config] == set()
    for path, imported in graph.items():
        me = wing_of(path)
        others = {wing_of(p) for p in imported} - {me}
        if me == "run":
            assert others <= {"config.py"}, (where(path), others)
        if me in ("sb3", "jax"):
            assert others <= {"run", "config.py", "export.py"}, (where(path), others)
        if me not in ("sb3", "jax", "train.py"):
            assert not others & {"sb3", "jax"}, (where(path), others)
    assert {wing_of(p) for p in graph[AGENTS / "train.py"]} >= {"sb3", "jax"}


def test_the_checker_reads_relative_and_lazy_imports(tmp_path):
    imported = agents_imports(AGENTS / "train.py")
    assert AGENTS / "jax" / "ppo.py" in imported and AGENTS / "sb3" / "train.py" in imported
    assert RUN / "folder.py" in agents_imports(AGENTS / "sb3" / "train.py")
    assert AGENTS / "config.py" in agents_imports(RUN / "schedule.py")


# ------------------------------------------------------------------ the maps
NAMED = re.compile(r"(?<!`)`([a-z_]+)`(?!`)")  # `module` in a docstring (``code`` is not)


def test_each_wing_names_what_it_holds():
    """Each wing's ``__init__.py`` names every module in it, and no other."""
    for wing in (RUN, *ENGINES):
        doc = ast.get_docstring(ast.parse((wing / "__init__.py").read_text(encoding="utf-8")))
        held = {p.stem for p in wing.glob("*.py") if p.name != "__init__.py"}
        assert set(NAMED.findall(doc or "")) == held, wing.name
