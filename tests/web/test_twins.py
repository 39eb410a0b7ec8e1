"""The twin checks' tools (tests/web/twins.py): missing, a twin check fails, naming what to
install; it skips only where ``YAHTZEE_SKIP_TWINS`` says so."""

from __future__ import annotations

import pytest
import twins


def test_a_missing_tool_fails_naming_what_to_install(monkeypatch):
    monkeypatch.delenv(twins.OPT_OUT, raising=False)
    with pytest.raises(pytest.fail.Exception, match=r"node is missing.*apt-get install nodejs"):
        twins.require("node", False, "apt-get install nodejs")
    monkeypatch.setenv(twins.OPT_OUT, "0")
    with pytest.raises(pytest.fail.Exception):
        twins.require("node", False, "apt-get install nodejs")


def test_the_opt_out_skips_and_a_found_tool_passes(monkeypatch):
    monkeypatch.setenv(twins.OPT_OUT, "1")
    with pytest.raises(pytest.skip.Exception, match="YAHTZEE_SKIP_TWINS is set"):
        twins.require("chromium", False, "apt-get install chromium")
    monkeypatch.delenv(twins.OPT_OUT)
    twins.require("node", True, "")


def test_the_tools_are_looked_up_where_the_twin_tests_look(monkeypatch, tmp_path):
    monkeypatch.delenv(twins.OPT_OUT, raising=False)
    monkeypatch.setenv("YAHTZEE_NODE", str(tmp_path / "no-node"))
    assert twins.node() is None
    with pytest.raises(pytest.fail.Exception, match="YAHTZEE_NODE"):
        twins.require_node()
    monkeypatch.setenv("YAHTZEE_CHROMIUM", str(tmp_path / "no-chromium"))
    with pytest.raises(pytest.fail.Exception, match="is missing"):
        twins.require_chromium()
