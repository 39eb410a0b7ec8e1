"""One lock per table: the work on a table (moves, CPU moves, the coach, loading, database
commits) runs one piece at a time, in a worker thread, so that the event loop only routes
and no request waits on another table's work."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool

from yahtzee_env.web.tables import clean_code


class TableLocks:
    """One asyncio lock per table code in use (the dict only holds codes being worked on)."""

    def __init__(self) -> None:
        self.locks: dict[str, tuple[asyncio.Lock, int]] = {}

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

    async def run(self, code: Any, work: Callable[[str], Any]) -> Any:
        """``work(code)`` in a worker thread, holding the table's lock (``code`` as typed:
        WebError 404 if it is no table code)."""
        code = clean_code(code)
        async with self.hold(code):
            return await run_in_threadpool(work, code)


__all__ = ["TableLocks"]
