"""The on-disk kernel cache: concurrent builds, corruption, unsafe directories, clearing, warm loads, no compiler.

Most checks run small scripts in fresh processes, each with its own cache directory under tmp_path, so they see
the disk and never the in-process module table.
"""

import os
import stat
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

import weft as wp
from weft.toolchain import cache

REPO = Path(__file__).resolve().parents[2]

# a kernel module whose source is unique per test (a fresh cache key), written into tmp_path
SCRIPT = textwrap.dedent('''
    import os, sys, time
    import numpy as np
    import weft as wp

    TAG = {tag!r}

    @wp.kernel
    def fresh_kernel(a: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = a[i] * 3.0 + {offset}

    def main():
        go = os.environ.get("WEFT_TEST_GO")
        if go:
            while not os.path.exists(go):
                time.sleep(0.001)
        if os.environ.get("WEFT_TEST_NO_COMPILER"):
            from weft.toolchain import build, compiler
            def refuse(*args, **kwargs):
                raise AssertionError("the compiler must not run on a warm cache")
            build._compile = refuse
            compiler.run = refuse
        a = wp.array(np.arange(5, dtype=np.float32))
        out = wp.zeros(5, dtype=float)
        wp.launch(fresh_kernel, dim=5, inputs=[a, out])
        print("RESULT", " ".join(str(x) for x in out.numpy()))

    if __name__ == "__main__":
        main()
''')


def _write_script(tmp_path: Path, offset: float = 1.0) -> Path:
    path = tmp_path / f"kern_{uuid.uuid4().hex[:8]}.py"
    path.write_text(SCRIPT.format(tag=uuid.uuid4().hex, offset=offset))
    return path


def _env(cache_dir: Path, **extra) -> dict:
    env = dict(os.environ)
    env["WEFT_CACHE_DIR"] = str(cache_dir)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("WEFT_VERBOSE", None)
    env.update(extra)
    return env


def _run(script: Path, env: dict, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _result(proc) -> list[float]:
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT"))
    return [float(x) for x in line.split()[1:]]


def _private_dir(path: Path) -> Path:
    path.mkdir(mode=0o700, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def _binaries(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob("cpu/*/*.so"))


EXPECTED = [1.0, 4.0, 7.0, 10.0, 13.0]


def test_two_processes_compile_the_same_kernel_at_once(tmp_path):
    cache_dir = _private_dir(tmp_path / "cache")
    script = _write_script(tmp_path)
    go = tmp_path / "go"
    env = _env(cache_dir, WEFT_TEST_GO=str(go), WEFT_VERBOSE="1")
    procs = [subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    time.sleep(0.5)  # both have imported weft and wait on the go file
    go.touch()
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, out + err
    results = [[float(x) for x in next(ln for ln in out.splitlines() if ln.startswith("RESULT")).split()[1:]]
               for out, _ in outs]
    assert results[0] == results[1] == EXPECTED
    # the per-key build lock: one process compiled, the other waited and loaded its binary
    compiled = [ln for out, _ in outs for ln in out.splitlines() if ln.startswith("weft: compiled fresh_kernel")]
    assert len(compiled) == 1, outs
    # one valid entry, no temp files left behind
    assert len(list(cache_dir.glob("cpu/*/*.ref"))) == 1
    assert not list(cache_dir.glob("cpu/*/.*.tmp"))
    assert not list(cache_dir.glob(".build-*"))


def test_build_lock_makes_concurrent_publishers_build_once(tmp_path, monkeypatch):
    """Threads (like processes: each opens the lock file itself) publishing one key: the first builds, the others
    wait on the key's lock and return its entry; a different key is not held up."""
    import threading

    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(_private_dir(tmp_path / "cache")))
    builds = []

    def build(tmp: Path) -> Path:
        builds.append(threading.get_ident())
        time.sleep(0.2)
        out = tmp / "module.bin"
        out.write_bytes(b"binary")
        return out

    key = cache.make_key("lock-test", uuid.uuid4().hex)
    results = []
    threads = [threading.Thread(target=lambda: results.append(cache.publish("cpu", key, "bin", build)))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(builds) == 1
    assert len(set(results)) == 1 and results[0].read_bytes() == b"binary"
    assert cache.lookup("cpu", key, "bin") == results[0]
    other = cache.make_key("lock-test", uuid.uuid4().hex)
    with cache.build_lock(cache.root() / "cpu" / key[:2], key):  # holding one key's lock blocks no other key
        assert cache.publish("cpu", other, "bin", build).read_bytes() == b"binary"
    assert len(builds) == 2


def test_truncated_entry_is_detected_and_rebuilt(tmp_path):
    cache_dir = _private_dir(tmp_path / "cache")
    script = _write_script(tmp_path)
    env = _env(cache_dir)
    assert _result(_run(script, env)) == EXPECTED
    (so,) = _binaries(cache_dir)
    data = so.read_bytes()
    so.write_bytes(data[: len(data) // 3])  # truncated by a crash or a full disk
    proc = _run(script, env)
    assert _result(proc) == EXPECTED
    (rebuilt,) = _binaries(cache_dir)
    assert rebuilt.read_bytes() == data or cache.digest_bytes(rebuilt.read_bytes())[:16] in rebuilt.name
    assert rebuilt.stat().st_size > len(data) // 3


def test_corrupt_entry_is_rebuilt(tmp_path):
    cache_dir = _private_dir(tmp_path / "cache")
    script = _write_script(tmp_path, offset=2.0)
    env = _env(cache_dir)
    first = _result(_run(script, env))
    (so,) = _binaries(cache_dir)
    data = bytearray(so.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, one flipped byte
    so.write_bytes(bytes(data))
    assert _result(_run(script, env)) == first == [2.0, 5.0, 8.0, 11.0, 14.0]


def test_warm_run_loads_without_the_compiler(tmp_path):
    cache_dir = _private_dir(tmp_path / "cache")
    script = _write_script(tmp_path)
    cold = _run(script, _env(cache_dir))
    warm = _run(script, _env(cache_dir, WEFT_TEST_NO_COMPILER="1"))
    assert _result(warm) == _result(cold) == EXPECTED
    # and the guard is real: with an empty cache the same script fails
    empty = _private_dir(tmp_path / "empty")
    proc = _run(script, _env(empty, WEFT_TEST_NO_COMPILER="1"), check=False)
    assert proc.returncode != 0 and "must not run" in proc.stderr


def test_clear_kernel_cache(tmp_path, monkeypatch):
    cache_dir = _private_dir(tmp_path / "cache")
    script = _write_script(tmp_path)
    _run(script, _env(cache_dir))
    assert _binaries(cache_dir)
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(cache_dir))
    wp.clear_kernel_cache()
    assert not _binaries(cache_dir)
    assert not list(cache_dir.glob("cpu/*/*.ref"))
    assert cache_dir.is_dir()  # the directory itself stays (with its safe permissions)
    # the next run compiles again and works
    assert _result(_run(script, _env(cache_dir))) == EXPECTED
    assert len(_binaries(cache_dir)) == 1


@wp.kernel
def k_cache_probe_world_writable(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = 41.0 + 0.5


@wp.kernel
def k_cache_probe_foreign_owner(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = 42.0 + 0.25


def test_world_writable_cache_dir_is_refused(tmp_path, monkeypatch):
    bad = tmp_path / "shared-cache"
    bad.mkdir()
    os.chmod(bad, 0o777)
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(bad))
    with pytest.raises(wp.CacheError) as info:
        wp.launch(k_cache_probe_world_writable, dim=1, inputs=[wp.zeros(1, dtype=float)])
    assert str(bad) in str(info.value)
    assert "writable" in str(info.value)
    assert not list(bad.rglob("*.so"))  # nothing was written into it either
    # once fixed, the same directory is accepted
    os.chmod(bad, 0o700)
    a = wp.zeros(1, dtype=float)
    wp.launch(k_cache_probe_world_writable, dim=1, inputs=[a])
    assert a.numpy()[0] == 41.5


def test_group_writable_cache_dir_is_refused(tmp_path, monkeypatch):
    bad = tmp_path / "group-cache"
    bad.mkdir()
    os.chmod(bad, 0o770)
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(bad))
    with pytest.raises(wp.CacheError, match="group-cache"):
        cache.root()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_cache_dir_owned_by_another_user_is_refused(tmp_path, monkeypatch):
    foreign = tmp_path / "foreign-cache"
    foreign.mkdir(mode=0o755)
    os.chown(foreign, 12345, 12345)
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(foreign))
    with pytest.raises(wp.CacheError) as info:
        wp.launch(k_cache_probe_foreign_owner, dim=1, inputs=[wp.zeros(1, dtype=float)])
    assert str(foreign) in str(info.value)
    assert "another user" in str(info.value)


def test_cache_dir_is_created_private(tmp_path, monkeypatch):
    new = tmp_path / "a" / "new-cache"
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(new))
    assert cache.root() == new
    assert stat.S_IMODE(new.stat().st_mode) & 0o022 == 0


def test_no_compiler_gives_install_instructions(tmp_path):
    cache_dir = _private_dir(tmp_path / "cache")
    script = _write_script(tmp_path)
    env = _env(cache_dir, CXX=str(tmp_path / "no-such-compiler" / "g++"), PATH="")
    proc = _run(script, env, check=False)
    assert proc.returncode != 0
    assert "ToolchainError" in proc.stderr
    assert "apt-get install g++" in proc.stderr
    assert "CXX" in proc.stderr


def test_cache_key_changes_with_source_and_options():
    from weft.toolchain.build import cpu_key
    from weft.toolchain.options import CpuOptions

    base = cpu_key("int x;", CpuOptions())
    assert cpu_key("int x;", CpuOptions()) == base
    assert cpu_key("int y;", CpuOptions()) != base
    assert cpu_key("int x;", CpuOptions(opt_level=2)) != base
    assert cpu_key("int x;", CpuOptions(debug=True)) != base


def test_lookup_rejects_a_ref_to_a_missing_binary(tmp_path, monkeypatch):
    cache_dir = _private_dir(tmp_path / "cache")
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(cache_dir))
    key = "ab" + "0" * 38

    def build(tmp):
        out = tmp / "x.so"
        out.write_bytes(b"payload" * 100)
        return out

    path = cache.publish("cpu", key, "so", build)
    assert cache.lookup("cpu", key, "so") == path
    path.unlink()
    assert cache.lookup("cpu", key, "so") is None
    np.testing.assert_equal(cache.publish("cpu", key, "so", build).read_bytes(), b"payload" * 100)
