"""The data shelf: where the experiments write what the docs pages quote (runs' metadata and
curves, gradings, games, measurements), named once. ``data/README.md`` says what each of its
folders holds, which command wrote it and which page reads it; the pages stay in ``docs/``.

    from shelf import DATA, DATA_DIR      # a script in experiments/ (its folder is on sys.path)
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = "data"
"""The shelf as rows and pages name it: a path from the repository's root."""
DATA = ROOT / DATA_DIR
"""The shelf on this machine."""
