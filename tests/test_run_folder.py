"""The run has one owner (issue 59): the run folder's shape, the schedule and the shaping
potential live in ``agents/run/`` and every trainer writes through it (AST-based, as
``tests/web/test_wings.py`` holds the storage wing)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AGENTS = ROOT / "agents"
RUN = AGENTS / "run"
TRAIN_COMMAND = ROOT / "yahtzee_env" / "commands" / "train.py"

# The run folder's files and folders, by the names a writer would spell
RUN_FILES = (
    "config.yaml",
    "command.txt",
    "meta.json",
    "evals.jsonl",
    "sessions.jsonl",
    "eval.json",
    "model.zip",
    "model.json",
    "checkpoints",
    "ckpt_",
    ".state.npz",
    "warm_start.json",
    "init.json",
    # the second run shape the JAX script wrote before the run module
    "progress.csv",
    "state.npz",
    "policy-",
)
# A model-based baseline's folder (`yahtzee_agents.model_based`, its own trainer) is read by the
# curves under its own names.
READERS = {"curves.py": {"config.json"}}


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the prose strings of ``tree``: docstrings, and the strings that stand alone
    as statements (a field's docstring)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def names(text: str, name: str) -> bool:
    """``text`` spells the run file ``name`` as a name (``checkpoints``, not
    ``keep_checkpoints``; a prefix such as ``ckpt_`` followed by anything)."""
    end = "" if name.endswith(("_", "-")) else r"(?![\w])"
    return re.search(r"(?<![\w])" + re.escape(name) + end, text) is not None


def string_literals(path: Path) -> list[tuple[int, str]]:
    """The string literals of a module (docstrings aside), and f-strings' literal parts."""
    tree = ast.parse(path.read_text())
    prose = docstrings(tree)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
    ]


def outside_run() -> list[Path]:
    return [p for p in sorted(AGENTS.rglob("*.py")) if RUN not in p.parents] + [TRAIN_COMMAND]


def test_no_run_file_is_named_outside_the_run_module():
    """No trainer, reader or the train command spells a run file's name: each asks
    `yahtzee_agents.run.folder.RunPaths` (so the folder's shape has one writer)."""
    found = []
    for path in outside_run():
        allowed = READERS.get(path.name, set())
        for line, text in string_literals(path):
            for name in RUN_FILES:
                if names(text, name) and name not in allowed:
                    found.append(f"{path.relative_to(ROOT)}:{line}: {text!r} names {name!r}")
    assert not found, "\n".join(found)


def test_the_run_module_names_the_run_files():
    """The names the test above looks for are the run module's (the list is not stale)."""
    text = "".join(value for p in RUN.glob("*.py") for _, value in string_literals(p))
    for name in ("config.yaml", "command.txt", "meta.json", "evals.jsonl", "sessions.jsonl",
                 "eval.json", "checkpoints", "ckpt_", ".state.npz"):  # fmt: skip
        assert name in text, name


def _functions(path: Path) -> list[str]:
    return [n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef)]


def test_one_schedule_and_one_potential_in_the_training_package():
    """The learning-rate schedule (`run.schedule.scheduled`) and the upper-bonus potential
    (`run.shaping.upper_bonus_potential`) are written once, with ``xp=`` for numpy and JAX;
    nothing else in ``agents/`` interpolates a schedule or reads the upper total for Phi."""
    assert "scheduled" in _functions(RUN / "schedule.py")
    assert "upper_bonus_potential" in _functions(RUN / "shaping.py")
    written = []
    for path in sorted(AGENTS.rglob("*.py")):
        if RUN in path.parents:
            continue
        source = path.read_text()
        tree = ast.parse(source)
        for node in ast.walk(tree):
            # a schedule: start + (end - start) * done
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
                right = ast.unparse(node.right)
                if ".end - " in right and ".start" in right:
                    written.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
            # the potential: whether the bonus is earned, read from the observation
            if isinstance(node, ast.Name) and node.id == "UPPER_BONUS_INDEX":
                written.append(f"{path.name}:{node.lineno}: {node.id}")
    assert not written, "\n".join(written)


def test_both_engines_use_the_one_schedule_and_potential():
    for name in ("sb3/train.py", "jax/ppo.py", "sb3/vec_env.py"):
        source = (AGENTS / name).read_text()
        assert "from ..run" in source, name
    jax_source = (AGENTS / "jax" / "ppo.py").read_text()
    assert "scheduled(" in jax_source and "xp=jnp" in jax_source
    sb3_source = (AGENTS / "sb3" / "train.py").read_text()
    assert "sb3_value(" in sb3_source and "scheduled(" in sb3_source
    assert "shaped_rewards(" in jax_source
    assert "shaped_rewards(" in (AGENTS / "sb3" / "vec_env.py").read_text()
