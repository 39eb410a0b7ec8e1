"""docs/security.md is held to the tests: every defence it lists names the test in tests/
that attacks it, every test it names exists, every adversary it names is one it defines,
and every attack test (a test whose name starts ``test_attack_``) has its row."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "security.md"
TEST_REF = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")
ADVERSARY_REF = re.compile(r"\*\*([\w-]+)\*\*")


def defined_tests(path: Path) -> set[str]:
    """The test functions of one file (module level and in classes)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    }


def adversaries(text: str) -> set[str]:
    """The adversaries' short names: the bold word that opens each item of the section
    "## Adversaries"."""
    section = text.split("## Adversaries", 1)[1].split("\n## ", 1)[0]
    return {
        m.group(1)
        for line in section.splitlines()
        if line.startswith("- ")
        for m in [ADVERSARY_REF.search(line)]
        if m
    }


def defence_rows(text: str) -> list[list[str]]:
    """The rows of the defence tables: ``| defence | adversaries | tests |``."""
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 3 or set(cells[0]) <= {"-", " ", ":"}:
            continue
        if cells[0].lower() == "defence":
            continue
        rows.append(cells)
    return rows


def problems(text: str, root: Path = ROOT) -> list[str]:
    """Every disagreement between the document ``text`` and the tests under ``root``."""
    found: list[str] = []
    known = adversaries(text)
    if not known:
        found.append("the document defines no adversaries")
    rows = defence_rows(text)
    if not rows:
        found.append("the document lists no defences")
    cache: dict[str, set[str]] = {}
    named: set[tuple[str, str]] = set()
    for defence, who, tests in rows:
        refs = TEST_REF.findall(tests)
        if not refs:
            found.append(f"no attack test for the defence {defence!r}")
        for path, name in refs:
            named.add((path, name))
            if path not in cache:
                file = root / path
                cache[path] = defined_tests(file) if file.is_file() else set()
            if name not in cache[path]:
                found.append(f"{path}::{name} (for {defence!r}) is not a test")
        names = {w.strip() for w in who.split(",") if w.strip()}
        if not names:
            found.append(f"the defence {defence!r} names no adversary")
        for name in sorted(names - known):
            found.append(f"the defence {defence!r} names an unknown adversary {name!r}")
    for file in sorted((root / "tests").rglob("test_*.py")):
        rel = file.relative_to(root).as_posix()
        for name in sorted(defined_tests(file)):
            if name.startswith("test_attack_") and (rel, name) not in named:
                found.append(f"{rel}::{name} attacks a defence the document does not list")
    return found


def test_the_threat_model_and_the_tests_agree():
    assert problems(DOC.read_text(encoding="utf-8")) == []


def test_the_check_catches_a_defence_without_its_test_and_an_unlisted_attack(tmp_path):
    """The checker itself fails where it should: a row with no test, a test that is not
    there, an adversary not defined, and an attack test the document does not list."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(
        "def test_attack_one():\n    pass\n\ndef test_attack_two():\n    pass\n"
    )
    doc = (
        "# Security\n\n## Adversaries\n\n- **stranger**: someone.\n\n## Defences\n\n"
        "| defence | adversaries | tests |\n|---|---|---|\n"
        "| one | stranger | `tests/test_x.py::test_attack_one` |\n"
        "| none | stranger | (none yet) |\n"
        "| gone | stranger | `tests/test_x.py::test_attack_gone` |\n"
        "| who | operator | `tests/test_x.py::test_attack_one` |\n"
    )
    found = problems(doc, tmp_path)
    assert any("no attack test for the defence 'none'" in p for p in found)
    assert any("test_attack_gone (for 'gone') is not a test" in p for p in found)
    assert any("unknown adversary 'operator'" in p for p in found)
    assert any("test_attack_two attacks a defence the document does not list" in p for p in found)
    assert not any("test_attack_one attacks" in p for p in found)
