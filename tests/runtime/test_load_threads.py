"""The thread policy of CPU launches on a busy machine (weft/runtime/threads.py): WEFT_NUM_THREADS, the load-aware
thread count, the OpenMP spin count; and results that do not depend on it."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import weft as wp
from weft.runtime import threads

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def policy(monkeypatch):
    """Restores the thread options, clears the cached load reading, and lets a test set the machine's load."""
    saved = (wp.config.num_threads, wp.config.load_aware_threads, wp.config.deterministic,
             wp.config.load_check_interval)
    load = {"runnable": 1, "own": 1}
    monkeypatch.setattr(threads, "runnable_tasks", lambda: load["runnable"])
    monkeypatch.setattr(threads, "own_runnable_tasks", lambda: load["own"])
    monkeypatch.setattr(threads, "_cores", lambda: 4)
    monkeypatch.setattr(threads, "_machine_cores", lambda: 4)
    threads.reset()
    wp.config.num_threads, wp.config.load_aware_threads, wp.config.deterministic = 0, True, False
    yield load
    (wp.config.num_threads, wp.config.load_aware_threads, wp.config.deterministic,
     wp.config.load_check_interval) = saved
    threads.reset()


def test_free_core_threads():
    assert threads.free_core_threads(4, 1) == 0  # only the caller: every core (OpenMP's default)
    assert threads.free_core_threads(4, None) == 0  # no /proc: every core
    assert threads.free_core_threads(4, 2) == 3
    assert threads.free_core_threads(4, 4) == 1
    assert threads.free_core_threads(4, 30) == 1  # never fewer than one
    assert threads.free_core_threads(4, 4, own=4) == 0  # our own spinning workers are no competition
    assert threads.free_core_threads(4, 6, own=4) == 2
    # a cpuset of 4 of 64 cores: 32 other tasks machine-wide put about 2 on our cores
    assert threads.free_core_threads(4, 33, machine_cores=64) == 2
    assert threads.free_core_threads(4, 10, machine_cores=64) == 0
    assert threads.free_core_threads(4, 33, machine_cores=4) == 1


def test_launch_threads_follows_load(policy):
    assert threads.launch_threads() == 0
    policy["runnable"] = 3
    threads.reset()
    assert threads.launch_threads() == 2
    policy["runnable"], policy["own"] = 9, 3
    threads.reset()
    assert threads.launch_threads() == 1
    policy["runnable"] = 40
    threads.reset()
    assert threads.launch_threads() == 1


def test_load_reading_is_cached(policy):
    wp.config.load_check_interval = 3600.0
    policy["runnable"] = 30
    assert threads.launch_threads() == 1
    policy["runnable"] = 1  # not read again within the interval
    assert threads.launch_threads() == 1
    wp.config.load_check_interval = 0.0
    threads.reset()
    assert threads.launch_threads() == 0


def test_fixed_and_deterministic_override_load(policy):
    policy["runnable"] = 30
    wp.config.num_threads = 3
    assert threads.launch_threads() == 3
    wp.config.num_threads = 0
    wp.config.load_aware_threads = False
    assert threads.launch_threads() == 0
    wp.config.load_aware_threads = True
    policy["runnable"] = 1
    wp.config.deterministic = True
    assert threads.launch_threads() == 1


def test_real_readings_are_sane():
    r = threads.runnable_tasks()
    assert r is None or r >= 1
    assert threads.own_runnable_tasks() >= 1  # the test itself is running


def _env(extra: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY", "WEFT_SPINCOUNT")}
    env.update(extra)
    env["PYTHONPATH"] = str(ROOT)
    return env


@pytest.mark.parametrize("extra, expected", [
    ({}, "10000"),
    ({"WEFT_SPINCOUNT": "500"}, "500"),
    ({"GOMP_SPINCOUNT": "123"}, "123"),  # the user's setting wins
    ({"OMP_WAIT_POLICY": "active"}, None),  # so does a wait policy: no spin count added
])
def test_spin_count_set_before_openmp_loads(extra, expected):
    code = "import os, weft; print(os.environ.get('GOMP_SPINCOUNT'))"
    out = subprocess.run([sys.executable, "-c", code], env=_env(extra), capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(expected)


def test_weft_num_threads_env():
    code = "import weft; print(weft.config.num_threads, weft.config.load_aware_threads)"
    out = subprocess.run([sys.executable, "-c", code], env=_env({"WEFT_NUM_THREADS": "1", "WEFT_LOAD_AWARE": "0"}),
                         capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "False"]


@wp.kernel
def _stencil(u: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    out[i + 1, j + 1] = u[i, j + 1] + u[i + 2, j + 1] + u[i + 1, j] + u[i + 1, j + 2] - 4.0 * u[i + 1, j + 1]


@wp.kernel
def _scatter(idx: wp.array(dtype=int), v: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, idx[i], v[i])


def _stencil_grad(n: int):
    rng = np.random.default_rng(5)
    u = wp.array(rng.standard_normal((n, n)).astype(np.float32), requires_grad=True)
    out = wp.zeros((n, n), dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_stencil, dim=(n - 2, n - 2), inputs=[u, out])
    w = rng.standard_normal((n, n)).astype(np.float32)
    out.grad = wp.array(w)
    tape.backward()
    return out.numpy(), u.grad.numpy(), w


@pytest.mark.parametrize("runnable", [1, 3, 40])  # quiet (all cores), partly busy, busy (one thread)
def test_stencil_and_gradient_under_any_load(policy, runnable):
    policy["runnable"] = runnable
    out, grad, w = _stencil_grad(192)
    # float64 reference of the adjoint: each interior point sends its weight to its neighbours
    ref = np.zeros(w.shape)
    c = w[1:-1, 1:-1].astype(np.float64)
    ref[:-2, 1:-1] += c
    ref[2:, 1:-1] += c
    ref[1:-1, :-2] += c
    ref[1:-1, 2:] += c
    ref[1:-1, 1:-1] -= 4.0 * c
    np.testing.assert_allclose(grad, ref, rtol=1e-5, atol=1e-5)
    assert np.isfinite(out).all()


def test_deterministic_results_bitwise_under_any_load(policy):
    rng = np.random.default_rng(7)
    n, m = 1 << 16, 97
    idx = wp.array(rng.integers(0, m, n).astype(np.int32))
    v = wp.array(rng.standard_normal(n).astype(np.float32))
    wp.config.deterministic = True
    results = []
    for runnable in (1, 3, 40):
        policy["runnable"] = runnable
        threads.reset()
        out = wp.zeros(m, dtype=float)
        wp.launch(_scatter, dim=n, inputs=[idx, v, out])
        results.append(out.numpy())
        results.append(_stencil_grad(192)[1])
    for a, b in zip(results[0::2], results[2::2]):
        assert a.tobytes() == b.tobytes()
    for a, b in zip(results[1::2], results[3::2]):
        assert a.tobytes() == b.tobytes()
    ref = np.zeros(m)
    np.add.at(ref, idx.numpy(), v.numpy().astype(np.float64))
    np.testing.assert_allclose(results[0], ref, rtol=1e-4, atol=1e-4)


def test_cached_count_follows_option_changes(policy):
    # the launch paths read threads.state inline; a fixed count is cached forever, so setting an option must reset it
    assert threads.launch_threads() == 0
    wp.config.num_threads = 3
    assert threads.state[0] == 0.0 and threads.launch_threads() == 3
    assert threads.state == (float("inf"), 3)
    wp.config.deterministic = True
    assert threads.launch_threads() == 1
    wp.config.deterministic, wp.config.num_threads, wp.config.load_check_interval = False, 0, 60.0
    policy["runnable"] = 3  # two other tasks on 4 cores
    assert threads.launch_threads() == 2
    policy["runnable"] = 1
    assert threads.launch_threads() == 2  # the reading holds for load_check_interval
    wp.config.load_check_interval = 0.1  # setting it reads the load again
    assert threads.launch_threads() == 0
