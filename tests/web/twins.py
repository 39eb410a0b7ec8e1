"""The tools the twin checks need (STYLE.md 22: the test that holds a twin equal runs in every
``make test``, and fails, not skips, where its tool is missing).

The page keeps two twins of Python code: its rules and levels (``static/js/game``,
``static/js/policies``; tests/web/test_offline_equality.py runs them in Node) and its dice
checker (``static/js/dice.js``; tests/web/test_dice_browser.py runs it in Chromium). Where
Node, Chromium or Playwright is missing those tests fail, naming what to install, unless
``YAHTZEE_SKIP_TWINS=1`` says to skip them on purpose (a machine that cannot install them;
``.ci/run`` installs both)."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

OPT_OUT = "YAHTZEE_SKIP_TWINS"


def require(tool: str, found: bool, install: str) -> None:
    """Fail (or, with ``YAHTZEE_SKIP_TWINS=1``, skip) when ``tool`` is not ``found``."""
    if found:
        return
    message = f"{tool} is missing, so the page's twin cannot be checked: {install}"
    if os.environ.get(OPT_OUT, "") not in ("", "0"):
        pytest.skip(f"{message} ({OPT_OUT} is set)")
    pytest.fail(f"{message}; or set {OPT_OUT}=1 to skip this check on purpose", pytrace=False)


def node() -> str | None:
    """The Node binary (``YAHTZEE_NODE``, default ``node`` on the PATH), or None."""
    return shutil.which(os.environ.get("YAHTZEE_NODE", "node"))


def require_node() -> str:
    found = node()
    require("node", found is not None, "apt-get install nodejs (or set YAHTZEE_NODE)")
    return found


def require_chromium() -> None:
    """Playwright and the chromium binary (``YAHTZEE_CHROMIUM``, as tests/web/conftest.py)."""
    require(
        "playwright",
        importlib.util.find_spec("playwright") is not None,
        "pip install -e '.[dev]'",
    )
    chromium = os.environ.get("YAHTZEE_CHROMIUM", "/usr/bin/chromium")
    require(
        f"chromium ({chromium})",
        Path(chromium).exists() or shutil.which(chromium) is not None,
        "apt-get install chromium (or set YAHTZEE_CHROMIUM)",
    )
