"""Moves that arrive together run together (issue 33): one worker-thread call for a batch of
moves at different tables and, on SQLite, one transaction for them all (group commit).

A move's work on a table (`service.Service.change`: the intent, the CPU moves after it, the
commit) otherwise costs a hand-off to a worker thread and back, and its own BEGIN and COMMIT;
under load those, not the game, are much of a move's cost. `MoveBatcher.run` queues the work
(its caller holds the table's lock, `locks.TableLocks`: at most one piece per table is
queued, so each table's order is kept) and one drain task hands everything queued to a worker
thread at once, batch after batch, one batch at a time. The batch runs inside
`Storage.group`: each move's optimistic block (`Tables.optimistically`) computes without
holding the database, its writes are held back, and the group commits them all in one
transaction at the end (holding SQLite's connection only for those statements); every move
of the batch is answered only after that COMMIT, so a move is still acknowledged only once
it is committed. A move that fails (a refused intent, a table gone) fails alone; a COMMIT
that fails fails the batch's every move, and their tables' copies in memory, which may be
ahead of the database, are dropped (rebuilt at their next use). Work that may take long (a
table not in memory, a table with the coach) does not come here: it runs in its own thread
(`locks.TableLocks.run`), so it never holds up the others.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool

from yahtzee_env.web.storage import StaleCopy, Storage
from yahtzee_env.web.tables import Tables

MAX_BATCH = 16  # moves handed to the worker at once (each waits for its batch: keep it short)


class MoveBatcher:
    """The queue of moves waiting for the next batch, and its drain task."""

    def __init__(self, storage: Storage, tables: Tables, max_batch: int = MAX_BATCH) -> None:
        self.storage, self.tables, self.max_batch = storage, tables, max_batch
        self.queue: list[tuple[str, Callable[[str], Any], asyncio.Future]] = []
        self.draining: asyncio.Future | None = None  # the drain task, while it runs
        self.batches = self.moves = 0  # how many batches ran, and their moves (the bench)

    async def run(self, code: str, work: Callable[[str], Any]) -> Any:
        """``work(code)`` in the next batch; its result, after the batch's commit. The caller
        holds the table's lock."""
        future = asyncio.get_running_loop().create_future()
        self.queue.append((code, work, future))
        if self.draining is None:
            self.draining = asyncio.ensure_future(self.drain())
        return await future

    async def drain(self) -> None:
        try:
            while self.queue:
                batch, self.queue = self.queue[: self.max_batch], self.queue[self.max_batch :]
                results = await run_in_threadpool(self.run_batch, batch)
                for (_, _, future), (ok, value) in zip(batch, results, strict=True):
                    if future.done():  # its caller went away (the socket closed)
                        continue
                    if ok:
                        future.set_result(value)
                    else:
                        future.set_exception(value)
        finally:
            self.draining = None

    def run_batch(self, batch: list) -> list[tuple[bool, Any]]:
        """Each move's ``(True, result)`` or ``(False, exception)`` (in a worker thread)."""
        results: list[tuple[bool, Any]] = []
        self.batches += 1
        self.moves += len(batch)
        try:
            with self.storage.group() as refused:
                for code, work, _ in batch:
                    try:
                        results.append((True, work(code)))
                    except Exception as err:  # refused, or failed before it wrote
                        results.append((False, err))
        except Exception as err:  # the group did not commit: none of it is in the database
            for code, _, _ in batch:
                self.tables.loaded.pop(code, None)
            return [(False, err)] * len(batch)
        for i, (code, _, _) in enumerate(batch):
            if code in refused:  # its row had moved on (gone): nothing of it was written
                self.tables.loaded.pop(code, None)
                results[i] = (False, StaleCopy(f"table {code} changed meanwhile: try again"))
        return results


__all__ = ["MAX_BATCH", "MoveBatcher"]
