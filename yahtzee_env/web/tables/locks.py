"""One lock per table: the work on a table (moves, CPU moves, the coach, loading, database
commits) runs one piece at a time, in a worker thread, so that the event loop only routes
and no request waits on another table's work.

A move where the work is short (issue 33) runs on the event loop instead: the hand-off to a
worker thread and back (anyio's, and the thread switches) cost the server more than the
move itself (the game, the CPU seats, a SQLite commit: a few tenths of a millisecond). It
is done only where the wait is bounded: `TableLocks.run` with ``inline`` (the storage's
`held_if_free`: the database is free this instant and on this machine, never waited for)
runs the work on the loop if the table's last piece of work took under `INLINE_BUDGET_S`;
a table over it goes to a worker thread until a piece of its work there is cheap again.
So one slow table (a CPU level that thinks long, the end of a game) costs the others at
most one budget's wait before it is sent off the loop, and the work of a busy database
(a commit in another thread) never waits on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool

from yahtzee_env.web.errors import clean_code

INLINE_BUDGET_S = 0.002  # a table's work this short may run on the event loop
MAX_SLOW = 10_000  # tables remembered as slow (beyond: forgotten, they try the loop again)


class TableLocks:
    """One asyncio lock per table code in use (the dict only holds codes being worked on).
    ``slow``: the tables whose last piece of work took over the budget; ``inline``/``threaded``
    count the pieces run on the loop and in a worker thread (``busy_db`` of those: the
    database was busy); ``inline_s``, the loop's time in them (read by the benchmark)."""

    def __init__(self, budget_s: float = INLINE_BUDGET_S) -> None:
        self.locks: dict[str, tuple[asyncio.Lock, int]] = {}
        self.budget_s = budget_s
        self.slow: set[str] = set()
        self.inline = self.threaded = self.busy_db = 0
        self.inline_s = self.inline_max_s = 0.0

    @contextlib.asynccontextmanager
    async def hold(self, code: str):
        lock, users = self.locks.get(code, (None, 0))
        lock = lock or asyncio.Lock()
        self.locks[code] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self.locks[code]
            if users == 1:
                del self.locks[code]
            else:
                self.locks[code] = (lock, users - 1)

    def busy(self, code: str) -> bool:
        return code in self.locks

    async def run(
        self,
        code: Any,
        work: Callable[[str], Any],
        inline: Callable[[], contextlib.AbstractContextManager[bool]] | None = None,
    ) -> Any:
        """``work(code)`` in a worker thread, holding the table's lock (``code`` as typed:
        WebError 404 if it is no table code). With ``inline`` (a context manager that yields
        whether the database is free now, held for the block), on the event loop when the
        table's work has been cheap and the database is free."""
        code = clean_code(code)
        async with self.hold(code):
            if inline is not None and code not in self.slow:
                with inline() as free:
                    if free:
                        return self.on_loop(code, work)
                self.busy_db += 1
            if inline is None:
                return await run_in_threadpool(work, code)
            return await run_in_threadpool(self.timed, code, work)

    def on_loop(self, code: str, work: Callable[[str], Any]) -> Any:
        """``work(code)`` here, on the event loop, timed by the loop thread's own CPU time
        (the machine's other processes and the worker threads holding the GIL meanwhile are
        not the table's cost)."""
        start = time.thread_time()
        try:
            return work(code)
        finally:
            self.timed_on_loop(code, time.thread_time() - start)

    def timed_on_loop(self, code: str, spent: float) -> None:
        """A piece of table ``code``'s work took ``spent`` seconds on the loop: counted,
        and over the budget, the table's next piece goes to a worker thread."""
        self.inline += 1
        self.inline_s += spent
        self.inline_max_s = max(self.inline_max_s, spent)
        if spent > self.budget_s:
            self.note_slow(code)

    def timed(self, code: str, work: Callable[[str], Any]) -> Any:
        """``work(code)`` in the worker thread, its own CPU time measured (not the waits
        for the GIL): under the budget, the table may use the loop again."""
        start = time.thread_time()
        try:
            return work(code)
        finally:
            self.threaded += 1
            if time.thread_time() - start > self.budget_s:
                self.note_slow(code)
            else:
                self.slow.discard(code)

    def note_slow(self, code: str) -> None:
        if len(self.slow) >= MAX_SLOW:
            self.slow.clear()
        self.slow.add(code)


__all__ = ["INLINE_BUDGET_S", "TableLocks"]
