"""``python -m weft`` / ``wp.print_diagnostics()`` / ``wp.init()`` with verbose: the report names the version, the
compiler, OpenMP, the SIMD level, the cache and the CUDA pieces; it never crashes when pieces are missing, and
``import weft`` does none of this work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import weft as wp
from weft import diagnostics

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str | None, tmp_path: Path, **env_changes) -> subprocess.CompletedProcess:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WEFT_CACHE_DIR": str(cache), **env_changes}
    env = {k: v for k, v in env.items() if v is not None}
    cmd = [sys.executable, "-m", "weft"] if code is None else [sys.executable, "-c", code]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300, check=False)


def test_python_dash_m_weft_reports_everything(tmp_path):
    proc = _run(None, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "weft   " in out and wp.__version__ in out
    for name in ("C++ compiler", "compile flags", "SIMD (-march=native)", "OpenMP", "kernel cache", "NVRTC",
                 "CUDA driver"):
        assert f"{name} " in out, (name, out)
    assert "-march=native" in out
    assert "OpenMP  " in out and "threads in a parallel region" in out
    assert str(tmp_path / "cache") in out
    assert "CPU kernels can be built here." in out
    assert proc.stderr == ""


def test_import_does_no_diagnostic_work(tmp_path):
    proc = _run("import sys, weft; assert 'weft.diagnostics' not in sys.modules; "
                "assert not any(m.startswith('cuda.bindings') for m in sys.modules); print('ok')", tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr


def test_report_without_cuda_packages(tmp_path):
    """The CUDA extra absent: both CUDA lines say why, the report still completes and exits 0."""
    code = ("import sys; sys.modules['cuda'] = None; sys.modules['cuda.bindings'] = None\n"
            "from weft.diagnostics import main; raise SystemExit(main())")
    proc = _run(code, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = {ln[2:].split("  ", 1)[0].strip(): ln for ln in proc.stdout.splitlines() if ln[:1] in " -!"}
    assert lines["NVRTC"].startswith("- ") and "not available" in lines["NVRTC"]
    assert lines["CUDA driver"].startswith("- ") and "CUDA extra is not installed" in lines["CUDA driver"]


def test_report_without_a_compiler(tmp_path):
    """No C++ compiler on PATH: the report says so with the install hint and ``python -m weft`` exits 1."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    proc = _run(None, tmp_path, PATH=str(empty), CXX=None)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "! C++ compiler" in proc.stdout and "apt-get install g++" in proc.stdout
    assert "PROBLEM: C++ compiler" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_cache_size_and_unsafe_cache(tmp_path, monkeypatch):
    cache = tmp_path / "c"
    (cache / "cpu").mkdir(parents=True)
    os.chmod(cache, 0o700)
    (cache / "cpu" / "blob").write_bytes(b"\0" * (3 * 2**20))
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(cache))
    monkeypatch.setattr(wp.config, "runtime_cache_dir", str(tmp_path / "rt"))
    item, runtime = diagnostics._cache_items()
    assert item.status is diagnostics.Status.OK and "3.0 MiB in 1 files" in item.value
    assert runtime.name == "runtime libraries" and "not created yet" in runtime.value
    os.chmod(cache, 0o777)
    item, _ = diagnostics._cache_items()
    assert item.status is diagnostics.Status.PROBLEM and "writable by other users" in item.value
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path / "not-yet"))
    item, _ = diagnostics._cache_items()
    assert "not created yet" in item.value
    (tmp_path / "rt").mkdir(mode=0o700)
    _, runtime = diagnostics._cache_items()
    assert runtime.status is diagnostics.Status.OK and "kept when the kernel cache is emptied" in runtime.value


@pytest.mark.parametrize("verbose", [False, True])
def test_init_prints_the_report_only_when_verbose(verbose, monkeypatch, capsys):
    monkeypatch.setattr(wp.config, "verbose", verbose)
    monkeypatch.setattr(diagnostics, "collect", lambda: [diagnostics.Item("weft", wp.__version__)])
    wp.init()
    out = capsys.readouterr().out
    assert (wp.__version__ in out) is verbose
    if not verbose:
        assert out == ""
    wp.print_diagnostics()
    assert wp.__version__ in capsys.readouterr().out


def test_log_level_gates_the_debug_messages(capsys):
    assert (wp.LOG_DEBUG, wp.LOG_INFO, wp.LOG_WARNING, wp.LOG_ERROR) == (10, 20, 30, 40)
    assert wp.config.log_level == wp.LOG_INFO and not wp.config.debug_messages()
    with wp.ScopedLogLevel(wp.LOG_DEBUG):
        assert wp.config.log_level == wp.LOG_DEBUG and wp.config.debug_messages()

        @wp.kernel
        def log_level_probe(a: wp.array(dtype=float)):
            a[wp.tid()] = 2.0

        a = wp.zeros(3, dtype=float)
        wp.launch(log_level_probe, dim=3, inputs=[a])
    assert wp.config.log_level == wp.LOG_INFO and a.numpy().tolist() == [2.0, 2.0, 2.0]
    assert "weft: " in capsys.readouterr().out
    wp.config.log_level = wp.LOG_WARNING
    try:
        assert not wp.config.debug_messages()
    finally:
        wp.config.log_level = wp.LOG_INFO
