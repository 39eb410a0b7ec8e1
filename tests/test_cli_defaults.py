"""Issue 59's small things: the README's `yahtzee export hard --format onnx` works as written
(no ``--out``: the current folder), `yahtzee verify` takes ``--no-progress`` as `yahtzee
benchmark` does, and pyproject.toml names only files and folders that exist."""

from __future__ import annotations

from pathlib import Path

import tomllib

from yahtzee_env.commands.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]


def test_export_of_a_level_without_out_writes_to_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert "`yahtzee export hard --format onnx`" in (ROOT / "README.md").read_text()
    assert main(["export", "hard", "--format", "onnx"]) == 0
    assert (tmp_path / "hard.onnx").stat().st_size > 0
    assert main(["export", "easy"]) == 0  # npz: the level's two files, byte for byte
    assert sorted(p.name for p in tmp_path.iterdir()) == ["easy.json", "easy.npz", "hard.onnx"]


def test_verify_accepts_no_progress() -> None:
    args = build_parser().parse_args(["verify", "results/hard.json", "hard", "--no-progress"])
    assert args.no_progress is True


def test_pyproject_names_only_files_that_exist() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    meta, tools = project["project"], project["tool"]["setuptools"]
    named = [meta["readme"], *meta.get("license-files", [])]
    missing = [name for name in named if not (ROOT / name).is_file()]
    dirs = tools.get("package-dir", {})

    def folder(package: str) -> Path:
        parts = package.split(".")
        for i in range(len(parts), 0, -1):  # the longest mapped prefix
            head = ".".join(parts[:i])
            if head in dirs:
                return ROOT / dirs[head] / Path(*parts[i:])
        return ROOT / Path(*parts)

    missing += [
        p
        for p in tools["packages"]
        if not (folder(p) / "__init__.py").is_file() and not any(folder(p).glob("*"))
    ]
    for package, patterns in tools.get("package-data", {}).items():
        missing += [
            f"{package}: {pattern}"
            for pattern in patterns
            if not any(folder(package).glob(pattern))
        ]
    for group in ("scripts", "gui-scripts"):
        for name, target in meta.get(group, {}).items():
            module = target.split(":")[0]
            path = folder(module)
            if not (path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()):
                missing.append(f"{name} = {target}")
    assert not missing, missing


def test_the_paths_pyproject_mentions_exist() -> None:
    """Comments included: a pointer to a file that is gone misleads the next reader."""
    import re

    text = (ROOT / "pyproject.toml").read_text()
    paths = set(re.findall(r"[\w.-]+(?:/[\w.-]+)+\.(?:py|txt|json|md|yaml|toml|cff)\b", text))
    assert "tests/test_installed.py" in paths
    assert not [p for p in sorted(paths) if not (ROOT / p).is_file()]
