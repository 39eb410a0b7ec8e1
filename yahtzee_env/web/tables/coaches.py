"""The coach of every rules preset, prepared in a child process: a hint never waits for a solve.

A preset's coach needs its solver table: seconds of CPU to solve, a few milliseconds to
load from the disk cache (`solver.exact.load_or_solve`). A solve on a thread of the serving
process would hold the GIL for those seconds and slow every other request, so:

- `Coaches.prepare` (``yahtzee serve`` calls it at start-up for every preset) loads the
  cached tables and solves the others in one child process (`multiprocessing`, spawn), one
  preset after another; the child writes each table to the disk cache, so the next start is
  instant, and the server loads it from there (or takes it from the child when the cache
  cannot be written).
- `Coaches.coach` answers at once: the coach, or `CoachWarming` (``seconds`` left, an
  estimate; the tables answer it as 503 ``coach_warming``) while its preset is prepared;
  a preset nobody asked for yet is queued then. The page says "the coach is warming up"
  and the table plays on.
- `Coaches.grader` is the coach or None: a move made while the coach warms up is played
  ungraded.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from yahtzee_env.game.rules import RuleSet

log = logging.getLogger("yahtzee.web")

SOLVE_ESTIMATE_S = 10.0  # seconds one preset's solve takes (about 6-8 s on a busy core)


def solve_in_child(rules_name: str, cache_dir: str | None) -> Any:
    """Solve (or load) the table of ``rules_name`` in the child and write the disk cache;
    return the table only when the cache could not be written (else None: read it there)."""
    from yahtzee_env.solver.exact import cache_path, load_or_solve

    table = load_or_solve(rules_name, cache_dir)
    return None if cache_path(rules_name, cache_dir).exists() else table


def cached_table(rules: RuleSet, cache_dir: str | None):
    """The table of ``rules`` from the disk cache, or None (missing or unusable)."""
    from yahtzee_env.solver.exact import CacheError, cache_path, load_table

    path = cache_path(rules, cache_dir)
    if not path.exists():
        return None
    try:
        return load_table(path, rules)
    except (CacheError, OSError) as err:
        log.warning("solver cache of %s unusable (solving it again): %s", rules.name, err)
        return None


class CoachWarming(Exception):
    """The coach of ``rules_name`` is being prepared: ready in about ``seconds``."""

    def __init__(self, rules_name: str, seconds: int) -> None:
        super().__init__(f"the coach of the {rules_name} rules is warming up")
        self.rules_name, self.seconds = rules_name, seconds


class Coaches:
    """The coaches of a server, one per preset, prepared off the serving process.

    ``cache_dir``: the solver cache (None: `solver.exact.default_cache_dir`)."""

    def __init__(self, cache_dir: str | os.PathLike | None = None) -> None:
        self.cache_dir = None if cache_dir is None else str(cache_dir)
        self.ready: dict[str, Any] = {}  # preset name -> Coach
        self.queue: list[str] = []  # presets given to the child, in its order
        self.started: dict[str, float] = {}  # preset -> when the child began it (monotonic)
        self.failed: dict[str, str] = {}
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self._closed = False

    # ------------------------------------------------------------------ asking
    def coach(self, rules: RuleSet):
        """The coach of ``rules``; `CoachWarming` while it is prepared (queued if new)."""
        coach = self.ready.get(rules.name)
        if coach is not None:
            return coach
        self._want(rules)
        coach = self.ready.get(rules.name)
        if coach is not None:
            return coach
        raise CoachWarming(rules.name, self.seconds_left(rules.name))

    def grader(self, rules: RuleSet):
        """The coach of ``rules`` if it is ready, else None (queued if new)."""
        coach = self.ready.get(rules.name)
        if coach is None:
            self._want(rules)
            coach = self.ready.get(rules.name)
        return coach

    def is_ready(self, rules_name: str) -> bool:
        return rules_name in self.ready

    def seconds_left(self, rules_name: str) -> int:
        """About how long until the coach of ``rules_name`` is ready (at least 1)."""
        with self._lock:
            pending = [name for name in self.queue if name not in self.ready]
        if rules_name not in pending:
            return 1
        ahead = pending.index(rules_name)
        first = pending[0]
        elapsed = time.monotonic() - self.started.get(first, time.monotonic())
        left = (ahead + 1) * SOLVE_ESTIMATE_S - elapsed
        return max(1, round(left))

    # ------------------------------------------------------------------ preparing
    def prepare(self, presets) -> None:
        """Prepare the coaches of ``presets`` (names): cached ones load here, the others
        go to the child (call it off the event loop: loading reads a few MB)."""
        for name in presets:
            self._want(RuleSet.from_spec(name))

    def _want(self, rules: RuleSet) -> None:
        with self._lock:
            if rules.name in self.ready or rules.name in self.queue or self._closed:
                return
            table = cached_table(rules, self.cache_dir)
            if table is not None:
                self.ready[rules.name] = self._coach_of(rules, table)
                return
            self.queue.append(rules.name)
            if self._pool is None:
                context = multiprocessing.get_context("spawn")  # no forked server state
                self._pool = ProcessPoolExecutor(max_workers=1, mp_context=context)
            future = self._pool.submit(solve_in_child, rules.name, self.cache_dir)
        future.add_done_callback(lambda f, rules=rules: self._solved(rules, f))
        if len(self.queue) == 1 or rules.name == self._first_pending():
            self.started.setdefault(rules.name, time.monotonic())
        log.info("solving the %s rules' coach table in a child process", rules.name)

    def _first_pending(self) -> str | None:
        pending = [name for name in self.queue if name not in self.ready]
        return pending[0] if pending else None

    @staticmethod
    def _coach_of(rules: RuleSet, table):
        from yahtzee_env.solver.coach import Coach

        return Coach(rules, table=table)

    def _solved(self, rules: RuleSet, future: Future) -> None:
        """The child finished ``rules`` (in the pool's thread): load it, start the clock of
        the next one."""
        try:
            table = future.result() or cached_table(rules, self.cache_dir)
            if table is None:
                raise RuntimeError("the solved table is not in the cache")
            self.ready[rules.name] = self._coach_of(rules, table)
        except Exception as err:
            if not self._closed:
                log.warning("could not prepare the %s rules' coach: %s", rules.name, err)
            with self._lock:
                self.failed[rules.name] = str(err)[:200]
                if rules.name in self.queue:
                    self.queue.remove(rules.name)
        nxt = self._first_pending()
        if nxt is not None:
            self.started.setdefault(nxt, time.monotonic())

    def close(self) -> None:
        """Stop the child (a solve under way is abandoned: its cache file is written
        atomically, so nothing half-written is left)."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            for process in list(getattr(pool, "_processes", {}).values()):
                process.terminate()
            pool.shutdown(wait=False, cancel_futures=True)


__all__ = ["SOLVE_ESTIMATE_S", "CoachWarming", "Coaches", "cached_table", "solve_in_child"]
