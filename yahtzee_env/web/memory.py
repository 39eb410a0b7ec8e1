"""Giving memory back after sockets close (issue 31: 1,000 sockets opened and closed left
73 MiB held).

What a closed socket leaves in Python is small and is forgotten by the sweeper (the rate
limiters' buckets of its address, the fan-out's note of its table); most of what stayed was
the C heap: the freed buffers of the connections stay in glibc's arenas (one per thread
that ever allocated, up to eight per core) instead of going back to the system. So the
server caps the arenas at start-up (`limit_arenas`: two) and, after every `TRIM_EVERY`
closed sockets and at each sweep, collects and trims the heap (`give_back`:
``malloc_trim``). Both are no-ops where the C library is not glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc

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


def give_back() -> bool:
    """Collect the garbage and hand the heap's free pages back to the system."""
    gc.collect()
    return bool(LIBC is not None and LIBC.malloc_trim(0))


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


__all__ = ["Closes", "give_back", "limit_arenas"]
