"""The training configs shipped with the package, by name: ``yahtzee train tiny``.

The repository's top-level ``configs/`` folder is the one source of truth; the wheel carries
the same files as ``yahtzee_agents/configs/`` (pyproject.toml maps the folder there), so a
config has the same name in a clone and in an install. A name is the file's path under that
folder without ``.yaml``: ``ppo``, ``ppo-long``, ``sweeps/tiny``.

Nothing here imports yaml or torch: ``yahtzee configs`` lists and prints them on a core install.
"""

from __future__ import annotations

import os
from pathlib import Path

_HERE = Path(__file__).resolve().parent


def configs_dir() -> Path | None:
    """The shipped configs' folder: inside the installed package, else (a source tree or an
    editable install) the repository's ``configs/`` beside ``agents/``."""
    for folder in (_HERE / "configs", _HERE.parent / "configs"):
        if folder.is_dir():
            return folder
    return None


def shipped_configs() -> dict[str, Path]:
    """Every shipped config, name -> file, sorted by name (``sweeps/...`` are sweep files)."""
    folder = configs_dir()
    if folder is None:
        return {}
    found = {
        path.relative_to(folder).with_suffix("").as_posix(): path
        for path in folder.rglob("*.yaml")
        if path.is_file()
    }
    return dict(sorted(found.items()))


def describe(path: Path) -> str:
    """The config's ``description:`` line (read as text, no YAML parser), or ''."""
    try:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("description:"):
                return line.partition(":")[2].strip().strip("'\"")
    except (OSError, UnicodeDecodeError):
        pass
    return ""


def resolve_config(text: str | os.PathLike) -> Path:
    """The file a CONFIG argument names: an existing path as given, else a shipped config's
    name (``tiny``, ``ppo-long``, ``sweeps/tiny``). `FileNotFoundError` names both readings."""
    path = Path(text)
    if path.exists():
        return path
    shipped = shipped_configs()
    name = os.fspath(text).removesuffix(".yaml")
    if name in shipped:
        return shipped[name]
    names = ", ".join(shipped) or "none found"
    raise FileNotFoundError(
        f"cannot read config {os.fspath(text)}: no such file, and not the name of a shipped "
        f"config ({names}; `yahtzee configs` lists them)"
    )


__all__ = ["configs_dir", "describe", "resolve_config", "shipped_configs"]
