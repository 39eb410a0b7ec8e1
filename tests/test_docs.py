"""The docs site builds from the repository with warnings as errors (issue 21.7)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None,
    reason="needs the docs extra (pip install 'yahtzee-rl[docs]')",
)
def test_docs_build_strict(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    assert "yahtzee_env.RuleSet" in api and "upper_bonus_threshold" in api  # from docstrings
    benchmark = (tmp_path / "site" / "benchmark" / "index.html").read_text()
    assert "yahtzee-benchmark-v1" in benchmark and "reported, not re-run" in benchmark
    assert "--8&lt;--" not in benchmark and "8<--" not in benchmark  # every snippet resolved


def test_every_readme_snippet_section_is_closed() -> None:
    readme = (ROOT / "README.md").read_text()
    starts = [line for line in readme.splitlines() if "--8<-- [start:" in line]
    ends = [line for line in readme.splitlines() if "--8<-- [end:" in line]
    assert len(starts) == len(ends) > 5
    for page in (ROOT / "docs").glob("*.md"):
        for line in page.read_text().splitlines():
            if line.startswith('--8<-- "README.md:'):
                name = line.split(":", 1)[1].rstrip('"')
                assert f"[start:{name}]" in readme and f"[end:{name}]" in readme, (page, name)
