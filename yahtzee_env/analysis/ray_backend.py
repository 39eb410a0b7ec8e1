"""Ray as an optional backend: game chunks as Ray tasks, on this machine or on a cluster.

    from yahtzee_env.analysis.ray_backend import RayRunner, ray_session
    with ray_session(address=None):                     # None: Ray in-process on this machine
        result = evaluate_policy(policy, 100_000, seed=0, runner=RayRunner())

Where Ray runs. ``address`` (the CLI's ``--address``), else the ``RAY_ADDRESS`` environment
variable, names an existing cluster (``ray start --head`` / ``ray up`` / KubeRay, e.g.
``ray://head:10001`` or ``auto``); with neither, `ray_session` starts a private Ray instance
on this machine (loopback only, no dashboard) and stops it at the end.

Why the numbers are the same as the local backend's. A runner only decides *where*
``fn(*job)`` runs: every job carries its own seed (a child of ``SeedSequence(seed)``), and
`RayRunner` yields the results in job order, so the results do not depend on the number of
workers or nodes, nor on which of them ran which chunk. A task whose worker dies is retried
by Ray (``max_retries``) from the same arguments, so it gives the same result.

Ray is imported lazily: without the ``ray`` extra, `require_ray` raises `RayMissingError`
whose message is the one-line install hint.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

INSTALL_HINT = "this needs the ray extra: pip install 'yahtzee-rl[ray]'"
LOCAL = "local"
# A local instance's shared-memory object store: chunks, results, policies and the solver
# table need little, and Ray's default (30% of RAM) is more than a shared machine should give.
OBJECT_STORE_MB = int(os.environ.get("YAHTZEE_RAY_OBJECT_STORE_MB", "300"))


class RayMissingError(ImportError):
    """Ray (or Ray Tune / Optuna) is not installed; the message is the install hint."""


def require_ray(*modules: str) -> Any:
    """Import and return ``ray`` (and check ``modules``, e.g. ``"ray.tune"``, ``"optuna"``), or
    raise `RayMissingError` with the install hint."""
    import importlib

    try:
        ray = importlib.import_module("ray")
        for name in modules:
            importlib.import_module(name)
    except ImportError as err:
        raise RayMissingError(f"{INSTALL_HINT} ({err.name or err} is missing)") from None
    return ray


def resolve_address(address: str | None) -> str:
    """``address``, else ``$RAY_ADDRESS``, else ``"local"`` (a private instance here)."""
    return address or os.environ.get("RAY_ADDRESS") or LOCAL


@contextlib.contextmanager
def ray_session(
    address: str | None = None,
    *,
    num_cpus: int | None = None,
    object_store_memory: int | None = None,
) -> Iterator[Any]:
    """Connect to Ray for the ``with`` block, yielding the ``ray`` module.

    An instance that is already connected (a test's cluster, a notebook) is used as is and left
    running. Otherwise: connect to the cluster at `resolve_address` (left running at the end),
    or start a private local instance on 127.0.0.1 with ``num_cpus`` (default: all cores) and
    an object store of ``object_store_memory`` bytes (default: ``$YAHTZEE_RAY_OBJECT_STORE_MB``
    or 300 MB), and shut it down at the end.
    """
    ray = require_ray()
    if ray.is_initialized():
        yield ray
        return
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no reporting home from a CLI
    target = resolve_address(address)
    quiet = {"logging_level": logging.ERROR, "log_to_driver": True}
    if target == LOCAL:
        ray.init(
            address=LOCAL,
            num_cpus=num_cpus,
            object_store_memory=object_store_memory or OBJECT_STORE_MB * 2**20,
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            **quiet,
        )
    else:
        ray.init(address=target, **quiet)
    try:
        yield ray
    finally:
        ray.shutdown()


def _run_job(fn: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    """A Ray task: ``fn(*args)``, and the id of the node that ran it."""
    import ray

    return ray.get_runtime_context().get_node_id(), fn(*args)


class RayRunner:
    """A chunk runner (see `yahtzee_env.analysis.evaluation.ChunkRunner`) that runs each job as a
    Ray
    task, spread over the cluster's nodes, and yields the results in job order.

    An argument that several jobs share (the same object: a policy, the solver table) is put
    in the object store once instead of being shipped with every task. ``nodes`` counts the
    tasks each node ran (for diagnostics and tests). Needs a connected Ray (`ray_session`).
    """

    def __init__(self, *, max_retries: int = 3, num_cpus: float = 1, spread: bool = True):
        self.max_retries = max_retries
        self.num_cpus = num_cpus
        self.spread = spread
        self.nodes: collections.Counter[str] = collections.Counter()

    def __call__(self, fn: Callable[..., Any], jobs: Sequence[tuple]) -> Iterator[Any]:
        ray = require_ray()
        if not ray.is_initialized():
            raise RuntimeError("RayRunner needs a connected Ray: use it inside ray_session()")
        task = ray.remote(_run_job).options(
            num_cpus=self.num_cpus,
            max_retries=self.max_retries,  # a dead worker's task runs again, same arguments
            retry_exceptions=False,  # an error in our code is not retried: it is raised
            scheduling_strategy="SPREAD" if self.spread else "DEFAULT",
            name=f"yahtzee:{getattr(fn, '__name__', 'job')}",
        )
        uses = collections.Counter(id(arg) for job in jobs for arg in job)
        refs: dict[int, Any] = {}

        def shipped(arg: Any) -> Any:
            if uses[id(arg)] < 2 or isinstance(arg, (int, float, str, bytes, type(None))):
                return arg
            if id(arg) not in refs:
                refs[id(arg)] = ray.put(arg)
            return refs[id(arg)]

        pending = [task.remote(fn, *(shipped(arg) for arg in job)) for job in jobs]
        for ref in pending:
            node, result = ray.get(ref)
            self.nodes[node] += 1
            yield result
