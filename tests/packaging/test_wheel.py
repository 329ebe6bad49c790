"""A non-editable install works: the sdist and the wheel built by ``python -m build`` (and what ``pip install .``
installs) carry every native header, and the installed package compiles and runs the README's quick-start kernel in
a fresh virtual environment, from a directory outside the checkout.

Marked slow (a package build, two venvs and a cold kernel compile: ~10-20 s); it runs in the default suite and in CI.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
NATIVE_SUFFIXES = (".h", ".cpp")  # headers and the native sources weft compiles at run time (geometry library)
HEADERS = sorted(
    p.relative_to(ROOT).as_posix()
    for p in (ROOT / "weft" / "native").rglob("*")
    if p.suffix in NATIVE_SUFFIXES and "tests" not in p.relative_to(ROOT / "weft" / "native").parts
)

QUICK_START = textwrap.dedent("""
    import sys
    from pathlib import Path

    import numpy as np
    import weft as wp

    @wp.kernel
    def saxpy(a: float, x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = a * x[i] + y[i]

    n = 1000
    x = wp.array(np.arange(n, dtype=np.float32))
    y = wp.ones(n, dtype=float)
    wp.launch(saxpy, dim=n, inputs=[2.0, x, y])
    assert np.array_equal(y.numpy(), 2.0 * np.arange(n, dtype=np.float32) + 1.0), y.numpy()[:4]
    print("weft from", Path(wp.__file__).resolve().parent)
""")


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], check=False, capture_output=True, text=True, timeout=600, **kw)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))}\n{proc.stdout}\n{proc.stderr}"
    return proc


def _copy_source(dest: Path) -> Path:
    """The files a source build reads, without build outputs: building in the checkout would write build/ and
    *.egg-info there (and race with parallel test workers)."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md", "MANIFEST.in", "setup.py", "setup.cfg", "LICENSE"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "weft", dest / "weft",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "*.egg-info"))
    return dest


def _fresh_venv(path: Path) -> Path:
    """A venv without pip (pip of this interpreter installs into it) that sees this interpreter's NumPy through a
    .pth line: only NumPy's directory is added, so no other installed copy of weft can be imported from there."""
    _run([sys.executable, "-m", "venv", "--without-pip", path])
    py = path / "bin" / "python"
    purelib = _run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    numpy_parent = Path(np.__file__).resolve().parents[1]
    (Path(purelib) / "_weft_test_numpy.pth").write_text(f"{numpy_parent}\n")
    return py


def _pip_install(py: Path, *args) -> None:
    _run([sys.executable, "-m", "pip", "--python", py, "install", "--no-deps", "--no-index", "-q", *args],
         env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})


def _run_quick_start(py: Path, venv: Path, tmp_path: Path) -> None:
    work = tmp_path / "elsewhere"
    work.mkdir(exist_ok=True)
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "WEFT_", "VIRTUAL_ENV"))}
    env.update(WEFT_CACHE_DIR=str(cache), WEFT_RUNTIME_DIR=str(tmp_path / "runtime"), PYTHONNOUSERSITE="1")
    (work / "quick_start.py").write_text(QUICK_START)
    out = _run([py, "quick_start.py"], cwd=work, env=env).stdout
    where = Path(out.split("weft from", 1)[1].strip())
    assert where.is_relative_to(venv.resolve()), f"weft was imported from {where}, not from the fresh venv {venv}"
    installed = sorted(
        p.relative_to(where.parent).as_posix()
        for p in (where / "native").rglob("*")
        if p.suffix in NATIVE_SUFFIXES and "tests" not in p.relative_to(where / "native").parts
    )
    assert installed == HEADERS


def _build_backend_ready() -> bool:
    try:
        version = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        return False
    return int(version.split(".")[0]) >= 77  # pyproject.toml's build requirement


@pytest.mark.slow
def test_built_wheel_has_every_header_and_runs_outside_the_checkout(tmp_path):
    pytest.importorskip("build", reason="the 'test' extra installs the 'build' package")
    src = _copy_source(tmp_path / "src")
    dist = tmp_path / "dist"
    # sdist first, then the wheel from the unpacked sdist (python -m build's default): checks both
    isolation = ["--no-isolation"] if _build_backend_ready() else []
    _run([sys.executable, "-m", "build", *isolation, "--outdir", dist, src])
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    assert [h for h in HEADERS if h not in in_wheel] == []
    with tarfile.open(sdist) as tar:
        in_sdist = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    assert [h for h in HEADERS if h not in in_sdist] == []
    assert "weft/sim/assets/arm7.urdf" in in_wheel and "weft/sim/assets/arm7.urdf" in in_sdist  # robot assets
    assert not [n for n in in_wheel if n.endswith((".so", ".pyc"))]

    venv = tmp_path / "venv"
    py = _fresh_venv(venv)
    _pip_install(py, wheel)
    _run_quick_start(py, venv, tmp_path)


@pytest.mark.slow
def test_pip_install_dot_runs_outside_the_checkout(tmp_path):
    """``pip install .`` (a non-editable install straight from a source tree)."""
    if not _build_backend_ready():
        pytest.skip("needs setuptools>=77 in this environment (the 'test' extra installs it)")
    src = _copy_source(tmp_path / "src")
    venv = tmp_path / "venv"
    py = _fresh_venv(venv)
    _pip_install(py, "--no-build-isolation", src)
    _run_quick_start(py, venv, tmp_path)
