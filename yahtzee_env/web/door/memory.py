"""Giving memory back after sockets close (issue 31: 1,000 sockets opened and closed left
73 MiB held).

What a closed socket leaves in Python is small and is forgotten by the sweeper (the rate
limiters' buckets of its address, the fan-out's note of its table), and its connection is let
go once its peer has gone (`server.websocket_protocol`: issue 57, a 5 s release timer held
every one); most of what stayed was
the C heap: the freed buffers of the connections stay in glibc's arenas (one per thread
that ever allocated, up to eight per core) instead of going back to the system. So the
server caps the arenas at start-up (`limit_arenas`: two) and, after every `TRIM_EVERY`
closed sockets and at each sweep, trims the heap (`give_back`: ``malloc_trim``); every few
seconds what survived is frozen (`Settler`: issue 60, no collection walking every socket's
objects; in play, no collection at all). `tune_gc` sets the collector for a long-running
server, `GcPauses` measures its pauses. The trims are no-ops where the C library is not
glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import time
from collections import deque

M_ARENA_MAX = -8  # mallopt's parameter (glibc's malloc.h)
TRIM_EVERY = 200  # closed sockets between two trims
ARENAS = 2


def _libc():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None


LIBC = _libc()


def limit_arenas(arenas: int = ARENAS) -> bool:
    """At most ``arenas`` malloc arenas for the threads to come (True if glibc took it)."""
    return bool(LIBC is not None and LIBC.mallopt(M_ARENA_MAX, arenas))


def give_back(full: bool = True) -> bool:
    """Hand the heap's free pages back to the system, after a collection of the garbage
    (``full``: every generation; else the young ones, where a closed socket's is). In a
    server `tune_gc` made, a young collection is left out: what a closed socket leaves is
    freed by reference counting, the young collections of long runs found no garbage, and
    each walked every socket's live coroutines (27 ms on average, up to 42, every 200
    closed sockets at 1,000 players: issue 60's fifth round); the `Settler` is that
    server's collector."""
    if full:
        gc.collect()
    elif not TUNED["server"]:
        gc.collect(1)
    return bool(LIBC is not None and LIBC.malloc_trim(0))


class Settler:
    """The collector in a long-running server (issue 60). A full collection walks every
    object of the oldest generation with every thread stopped: at 1,000 players 230-414
    thousand objects (the sockets', the tables'), 0.6 s, and CPython starts one whenever that
    generation has grown by a quarter; a middle one walks what the young ones promoted
    (up to 157 ms in a ten-minute run). Yet the server's objects are freed by reference
    counting (a frozen object still is): its collections found no garbage in a long run
    (`GcPauses.collected`), and `test_whole_games_at_the_tables_leave_no_cyclic_garbage`
    holds a game's moves to none. So every few seconds `settle` freezes what the young
    collections left (`gc.freeze`, a constant-time move of the lists): the older
    generations stay nearly empty and no collection walks the sockets' objects. In case
    some cycle did end up frozen, once every ``unfreeze_every_s`` the frozen objects go back
    to the collector and one full collection walks them all (one pause an hour), and sooner
    where the frozen objects have grown past ``most_frozen`` and past ``growth`` times what
    the last full collection left: refusals may leave cycles (in one test process, 200
    refused requests and 80 refused or broken sockets left 8,000 objects in cycles), and
    with no collection in play (`GC_THRESHOLD`) a stranger could otherwise make the server
    hold an hour of them. Play stays below that (600,000 frozen objects at 1,000 players,
    1.1 million at 5,000 sockets). The frozen objects are counted once every
    ``count_every_s``, not at each freeze: `gc.get_freeze_count` walks them all with the
    GIL held, and every 2 s it stopped the event loop for 20-60 ms at 1,000 players
    (issue 60, seventh round: the slowest moves came every 2 s). Only in a process
    `tune_gc` made a server's (``yahtzee serve``; ``freeze`` None): an app in a test
    process or under another server leaves the collector alone, as `tune_gc` does."""

    def __init__(
        self,
        unfreeze_every_s: float = 3600.0,
        clock=time.monotonic,
        freeze: bool | None = None,
        most_frozen: int = 1_500_000,
        growth: float = 2.0,
        count_every_s: float = 60.0,
    ) -> None:
        self.unfreeze_every_s, self.clock, self.freeze = unfreeze_every_s, clock, freeze
        self.most_frozen, self.growth = most_frozen, growth
        self.count_every_s = count_every_s
        self.last_full = self.last_count = clock()
        self.left = 0  # the frozen objects the last full collection left (the live ones)

    @classmethod
    def of(cls, limits) -> Settler:
        """A server's, by its `Limits`: the hourly unfreeze, the frozen objects' bound and
        how often they are counted."""
        return cls(
            limits.unfreeze_every_s,
            most_frozen=limits.frozen_most,
            count_every_s=limits.frozen_count_every_s,
        )

    def settle(self) -> bool:
        """(A worker thread, every few seconds) the freeze, or a full collection and the
        freeze: hourly, or once the frozen objects have grown too many (counted once every
        ``count_every_s``). True if it was a full one."""
        if not (TUNED["server"] if self.freeze is None else self.freeze):
            return False
        gc.freeze()
        now = self.clock()
        full = now - self.last_full >= self.unfreeze_every_s
        if not full and now - self.last_count >= self.count_every_s:
            self.last_count = now  # the count walks every frozen object: not every freeze
            full = gc.get_freeze_count() > max(self.most_frozen, self.growth * self.left)
        if full:
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self.last_full = self.last_count = self.clock()
            self.left = gc.get_freeze_count()
        return full


# the serving process's: a young collection only past 100,000 new objects, which the
# `Settler`'s freeze every 2 s resets first (at 1,000 players a young collection walked
# 24,000-38,000 objects, the sockets' coroutines most, for 15-45 ms: issue 60)
GC_THRESHOLD = (100_000, 10, 10)
TUNED = {"server": False}  # whether `tune_gc` made this process a long-running server's


def tune_gc() -> None:
    """For a long-running server (issue 33): the objects alive after start-up (modules,
    the CPU levels' weights) are moved out of the collector's reach (`gc.freeze`: a full
    collection no longer walks them), and the young generation is collected only past
    `GC_THRESHOLD`'s 100,000 new objects, not CPython's 700: the `Settler` freezes the
    survivors every few seconds first, so in play no collection runs at all. With CPython's
    defaults the collector stopped the server for about a sixth of its time per move at
    1,000 players, full collections for up to a third of a second."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)
    TUNED["server"] = True


class GcPauses:
    """The time the cyclic garbage collector stops the process for (issue 33: every thread
    waits for it, the event loop too), by generation: ``count``, ``total_s`` and ``max_s``,
    measured from `gc.callbacks` while `start` has been called (for the load benchmark), and
    the last ``RECENT`` pauses as ``(time.monotonic() at its end, generation, seconds,
    CPU seconds of the collecting thread)``, so that a benchmark can take the longest of its
    own window (`longest_since`) and set its slow moves beside them (`since`). A pause
    whose wall time is far above its CPU time was the machine's (the thread descheduled
    while it held the GIL), not the collector's work."""

    RECENT = 4096

    def __init__(self) -> None:
        self.count = [0, 0, 0]
        self.total_s = [0.0, 0.0, 0.0]
        self.max_s = [0.0, 0.0, 0.0]
        self.cpu_s = [0.0, 0.0, 0.0]
        self.collected = [0, 0, 0]  # unreachable objects found (cyclic garbage) by generation
        self.recent: deque[tuple[float, int, float, float]] = deque(maxlen=self.RECENT)
        self._began = self._began_cpu = 0.0

    def start(self) -> None:
        if self._callback not in gc.callbacks:
            gc.callbacks.append(self._callback)

    def stop(self) -> None:
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._began, self._began_cpu = time.perf_counter(), time.thread_time()
            return
        gen = min(int(info.get("generation", 2)), 2)
        spent = time.perf_counter() - self._began
        cpu = time.thread_time() - self._began_cpu
        self.count[gen] += 1
        self.collected[gen] += int(info.get("collected", 0))
        self.total_s[gen] += spent
        self.cpu_s[gen] += cpu
        self.max_s[gen] = max(self.max_s[gen], spent)
        self.recent.append((time.monotonic(), gen, spent, cpu))

    def longest_since(self, since: float) -> list[float]:
        """The longest pause of each generation that ended after ``since`` (`time.monotonic`),
        among the last ``RECENT``."""
        out = [0.0, 0.0, 0.0]
        for ended, gen, spent, _cpu in self.copy():
            if ended > since:
                out[gen] = max(out[gen], spent)
        return out

    def since(self, since: float) -> list[list[float]]:
        """The pauses that ended after ``since``, among the last ``RECENT``: ``[end, generation,
        seconds, CPU seconds]`` each."""
        return [[ended, gen, spent, cpu] for ended, gen, spent, cpu in self.copy() if ended > since]

    def copy(self) -> list[tuple[float, int, float, float]]:
        """The recent pauses, copied: a collection may start during any allocation, its
        callback appending to them, and a walk of the deque itself would then fail."""
        while True:
            try:
                return list(self.recent)
            except RuntimeError:  # "deque mutated during iteration": copy again
                continue

    def snapshot(self, since: float | None = None) -> dict:
        """The counts and times so far; with ``since``, also ``max_s_since``: the longest
        pause of each generation after it, and ``pauses_since``, each of them (and ``now``,
        this process's `time.monotonic`)."""
        out = {"count": list(self.count), "total_s": list(self.total_s), "max_s": list(self.max_s)}
        out["cpu_s"] = list(self.cpu_s)
        out["collected"] = list(self.collected)
        out["frozen"] = gc.get_freeze_count()  # objects out of the collector's walks
        out["now"] = time.monotonic()
        if since is not None:
            out["max_s_since"] = self.longest_since(since)
            out["pauses_since"] = self.since(since)
        return out


class Closes:
    """Counts closed sockets; `closed` says when it is time to `give_back`."""

    def __init__(self, every: int = TRIM_EVERY) -> None:
        self.every, self.count = every, 0

    def closed(self) -> bool:
        self.count += 1
        if self.count >= self.every:
            self.count = 0
            return True
        return False


__all__ = [
    "GC_THRESHOLD",
    "Closes",
    "GcPauses",
    "Settler",
    "give_back",
    "limit_arenas",
    "tune_gc",
]
