"""What a run ran on: library versions, the CPU and its flags, and the BLAS / oneDNN kernels
in use, recorded in every run folder's ``meta.json`` (``"environment"``).

Bit-exact repetition (exact resume, a rerun of a seed) holds on the same machine with the same
kernels and versions. Across CPUs it does not: MKL, oneDNN and OpenBLAS pick kernels by the
instruction set they find (AVX2, AVX-512, ...), and a different summation order changes the
last bits of a float, which PPO amplifies into a different run. These facts say which case a
comparison is in.
"""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
from typing import Any

# Libraries whose versions can change a run's numbers.
LIBRARIES = (
    "numpy",
    "torch",
    "stable-baselines3",
    "sb3-contrib",
    "gymnasium",
    "yahtzee-rl",
    "onnxruntime",
    "threadpoolctl",
)
# Environment variables that pick kernels or thread counts.
KERNEL_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "OPENBLAS_CORETYPE",
    "MKL_NUM_THREADS",
    "MKL_ENABLE_INSTRUCTIONS",
    "MKL_CBWR",
    "ONEDNN_MAX_CPU_ISA",
    "DNNL_MAX_CPU_ISA",
    "ATEN_CPU_CAPABILITY",
)


def library_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def cpu_facts() -> dict[str, Any]:
    """Model name and flags from /proc/cpuinfo (Linux), else what `platform` knows."""
    facts: dict[str, Any] = {
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "model": None,
        "flags": [],
        "logical_cpus": os.cpu_count(),
        "system": f"{platform.system()} {platform.release()}",
    }
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and facts["model"] is None:
                    facts["model"] = value.strip()
                elif key in ("flags", "Features") and not facts["flags"]:
                    facts["flags"] = sorted(value.split())
                if facts["model"] and facts["flags"]:
                    break
    except OSError:
        pass
    return facts


def kernel_facts() -> dict[str, Any]:
    """The kernels actually in use: threadpoolctl's view of the loaded BLAS / OpenMP
    libraries, torch's CPU capability, build config and threads, numpy's SIMD levels, and
    the environment variables that steer them."""
    facts: dict[str, Any] = {
        "variables": {k: os.environ[k] for k in KERNEL_VARIABLES if k in os.environ}
    }
    try:
        import numpy as np

        simd = np.show_config(mode="dicts").get("SIMD Extensions", {})
        facts["numpy_simd"] = {"baseline": simd.get("baseline"), "found": simd.get("found")}
    except Exception as err:  # an old numpy without mode="dicts"
        facts["numpy_simd"] = f"unknown ({type(err).__name__})"
    if "torch" in sys.modules:
        import torch

        facts["torch"] = {
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "mkldnn": torch.backends.mkldnn.is_available(),
            "mkl": torch.backends.mkl.is_available(),
            "num_threads": torch.get_num_threads(),
            "config": torch.__config__.show(),
        }
    try:
        from threadpoolctl import threadpool_info

        facts["threadpools"] = threadpool_info()
    except ImportError:
        facts["threadpools"] = "threadpoolctl not installed"
    return facts


def environment_facts() -> dict[str, Any]:
    """Everything above, JSON-ready."""
    return {"libraries": library_versions(), "cpu": cpu_facts(), "kernels": kernel_facts()}
