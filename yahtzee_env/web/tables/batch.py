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

On the event loop (issue 33, second round: ``--batch-moves`` where the moves run on the
loop, on SQLite): a batcher given the tables' locks (`locks.TableLocks`) waits one turn of
the loop for the moves that arrive with the first, then runs the batch on the loop itself
when the database is free (`Storage.held_if_free`; else in a worker thread as above), each
move timed: a table whose move took over the budget runs its next one in a thread, outside
the batches.
A batch pays one BEGIN and one COMMIT (about 4 moves a transaction at 1,000 players), but
measured it saved the server under 2% of its CPU time per move: not the default.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool

from yahtzee_env.web.storage import StaleCopy, Storage
from yahtzee_env.web.tables.authority import Tables
from yahtzee_env.web.tables.locks import TableLocks

MAX_BATCH = 16  # moves handed to the worker at once (each waits for its batch: keep it short)


class MoveBatcher:
    """The queue of moves waiting for the next batch, and its drain task. ``locks``: run
    the batches on the event loop where the database is free (see above)."""

    def __init__(
        self,
        storage: Storage,
        tables: Tables,
        max_batch: int = MAX_BATCH,
        locks: TableLocks | None = None,
    ) -> None:
        self.storage, self.tables, self.max_batch = storage, tables, max_batch
        self.locks = locks
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
            if self.locks is not None:
                await asyncio.sleep(0)  # one turn of the loop: the moves arriving with it
            while self.queue:
                batch, self.queue = self.queue[: self.max_batch], self.queue[self.max_batch :]
                results = None
                if self.locks is not None:
                    with self.storage.held_if_free() as free:
                        if free:
                            results = self.run_batch(batch, self.locks)
                if results is None:
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

    def run_batch(self, batch: list, on_loop: TableLocks | None = None) -> list[tuple[bool, Any]]:
        """Each move's ``(True, result)`` or ``(False, exception)`` (in a worker thread, or
        ``on_loop``: on the event loop, each move timed by those locks)."""
        results: list[tuple[bool, Any]] = []
        self.batches += 1
        self.moves += len(batch)
        try:
            with self.storage.group() as refused:
                for code, work, _ in batch:
                    start = time.thread_time()
                    try:
                        results.append((True, work(code)))
                    except Exception as err:  # refused, or failed before it wrote
                        results.append((False, err))
                    if on_loop is not None:
                        on_loop.timed_on_loop(code, time.thread_time() - start)
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
