"""Bare Python errors became weft errors (issue 13, item 6): an unwritable or full cache, a garbage binary that
matches its digest, a damaged lowering record, out-of-range / non-numeric scalar arguments, bad struct fields."""

import errno
import hashlib
import json
import shutil
import subprocess

import numpy as np
import pytest

import weft as wp
from weft.toolchain import build, cache

from .child import run_child

PROBE = """
import numpy as np, weft as wp

@wp.kernel
def error_probe(a: wp.array(dtype=float), s: float):
    i = wp.tid()
    a[i] = float(i) * s

a = wp.zeros(8, dtype=float)
try:
    wp.launch(error_probe, dim=8, inputs=[a, 2.0])
    print("ok", bool((a.numpy() == np.arange(8) * 2.0).all()))
except wp.Error as e:
    print(type(e).__name__, str(e).replace(chr(10), " "))
"""


@wp.kernel
def scalars(x: float, n: int, h: wp.float16, u: wp.uint8, b: bool, out: wp.array(dtype=float)):
    out[0] = x + float(n) + float(h) + float(u) + wp.where(b, 1.0, 0.0)


@wp.struct
class Params:
    f: float
    n: int
    v: wp.vec3
    a: wp.array(dtype=float)


def _args(**over):
    args = {"x": 1.0, "n": 2, "h": 0.5, "u": 3, "b": True, "out": wp.zeros(1, dtype=float)}
    args.update(over)
    return list(args.values())


@pytest.mark.parametrize("name,value,text", [
    ("x", 1e300, "out of range for float32"),
    ("x", np.float64(-1e39), "out of range for float32"),
    ("h", 1e5, "out of range for float16"),
    ("x", "2", "got str '2'"),
    ("n", "2", "got str '2'"),
    ("x", None, "got NoneType"),
    ("n", 2.0, "got the float"),
    ("n", 2**40, "out of range for int32"),
    ("u", -1, "out of range for uint8"),
    ("u", 256, "out of range for uint8"),
    ("b", "yes", "got str"),
])
def test_bad_scalar_arguments(name, value, text):
    for _ in range(2):  # the second launch tries the fast path first
        wp.launch(scalars, dim=1, inputs=_args())
        with pytest.raises(wp.LaunchError, match=f"argument '{name}': .*{text}"):
            wp.launch(scalars, dim=1, inputs=_args(**{name: value}))


def test_good_scalar_arguments():
    out = wp.zeros(1, dtype=float)
    wp.launch(scalars, dim=1, inputs=[np.float32(1.0), np.int64(2), 0.5, np.uint8(3), np.bool_(True), out])
    assert out.numpy()[0] == 7.5
    wp.launch(scalars, dim=1, inputs=[float("inf"), 2, 0.5, 3, False, out])
    assert out.numpy()[0] == np.inf


@pytest.mark.parametrize("field,value,text", [
    ("f", None, "expected float32, got NoneType"),
    ("n", 5.7, "got the float 5.7"),
    ("n", None, "got NoneType"),
    ("n", "3", "got str"),
    ("f", "2.0", "got str"),
    ("f", 1e300, "out of range for float32"),
    ("v", "1", "expects vec3f, got str"),  # (None zero-initialises a vector field, as in Warp 1.19)
    ("v", (1.0, 2.0), "expects vec3f"),
    ("a", np.zeros(3), "expects (a Warp )?array"),
])
def test_bad_struct_fields(field, value, text):
    p = Params()
    with pytest.raises(wp.StructFieldError, match=f"field '{field}'.*{text}"):
        setattr(p, field, value)
    with pytest.raises(TypeError):  # also a TypeError, as before
        Params(**{field: value})


def test_good_struct_fields():
    p = Params(f=np.float64(0.5), n=np.int16(3), v=(1, 2, 3))
    assert (p.f, p.n, tuple(p.v)) == (0.5, 3, (1.0, 2.0, 3.0))


@pytest.fixture
def private_cache(tmp_path):
    old = wp.config.kernel_cache_dir
    d = tmp_path / "cache"
    d.mkdir(mode=0o700)
    wp.config.kernel_cache_dir = str(d)
    yield d
    wp.config.kernel_cache_dir = old


def _fresh_kernel(tag: float):
    # a kernel whose code is new to the cache (the constant differs per test)
    @wp.kernel
    def fresh(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = float(i) + tag

    return fresh


def test_read_only_cache_dir(private_cache, monkeypatch):
    def denied(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", kwargs.get("dir"))

    monkeypatch.setattr(cache.tempfile, "mkdtemp", denied)
    with pytest.raises(wp.CacheError, match="cannot write the kernel cache.*Permission denied"):
        wp.launch(_fresh_kernel(0.25), dim=4, inputs=[wp.zeros(4, dtype=float)])


def test_full_disk_when_publishing(private_cache, monkeypatch):
    def full(src, dst, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(dst))

    monkeypatch.setattr(cache.shutil, "copyfile", full)
    with pytest.raises(wp.CacheError, match="No space left on device"):
        wp.launch(_fresh_kernel(0.5), dim=4, inputs=[wp.zeros(4, dtype=float)])


def test_full_disk_while_compiling(private_cache, monkeypatch):
    def compiler_out_of_space(cmd, *args, **kwargs):
        msg = "fatal error: error writing to /tmp/x.s: No space left on device"
        return subprocess.CompletedProcess(cmd, 1, "", msg)

    monkeypatch.setattr(build, "run", compiler_out_of_space)
    with pytest.raises(wp.CacheError, match="no space left"):
        wp.launch(_fresh_kernel(0.75), dim=4, inputs=[wp.zeros(4, dtype=float)])


@pytest.fixture(scope="module")
def primed(tmp_path_factory):
    c = tmp_path_factory.mktemp("primed") / "cache"
    c.mkdir(mode=0o700)
    assert run_child(PROBE, env={"WEFT_CACHE_DIR": str(c)}).split() == ["ok", "True"]
    return c


def _copy(primed, tmp_path):
    c = tmp_path / "cache"
    shutil.copytree(primed, c, symlinks=True, ignore=shutil.ignore_patterns("pch", ".build-*"))
    return c, {"WEFT_CACHE_DIR": str(c), "WEFT_PCH": "0"}


def _replace_binary(c, data: bytes):
    (ref,) = (c / "cpu").glob("*/*.ref")
    key = ref.name[:-len(".ref")]
    name = f"{key}-{hashlib.sha256(data).hexdigest()[:16]}.so"
    (ref.parent / name).write_bytes(data)
    (ref.parent / name).chmod(0o700)
    ref.write_text(name)


def test_garbage_binary_matching_its_digest_is_rebuilt(primed, tmp_path):
    c, env = _copy(primed, tmp_path)
    _replace_binary(c, b"\x7fELF this is not a shared library" * 100)
    assert run_child(PROBE, env=env).split() == ["ok", "True"]
    assert run_child(PROBE, env=env).split() == ["ok", "True"]  # and the rebuilt entry is used next time


def test_foreign_library_in_entry_is_a_cache_error(primed, tmp_path):
    c, env = _copy(primed, tmp_path)
    src = tmp_path / "other.c"
    src.write_text("int unrelated(void) { return 1; }\n")
    cc = shutil.which("gcc") or shutil.which("cc")
    subprocess.run([cc, "-shared", "-fPIC", str(src), "-o", str(tmp_path / "other.so")], check=True)
    _replace_binary(c, (tmp_path / "other.so").read_bytes())
    out = run_child(PROBE, env=env)
    assert out.startswith("CacheError") and "lacks weft's entry points" in out


@pytest.mark.parametrize("damage", ["drop_tid_arity", "written_string", "written_out_of_range", "paths_list",
                                    "deps_int", "not_json"])
def test_damaged_spec_record_is_ignored(primed, tmp_path, damage):
    c, env = _copy(primed, tmp_path)
    records = list((c / "spec").glob("*/*.json"))
    assert records
    for path in records:
        if damage == "not_json":
            path.write_text("{ not json")
            continue
        rec = json.loads(path.read_text())
        if damage == "drop_tid_arity":
            rec.pop("tid_arity")
        elif damage == "written_string":
            rec["written"] = "abc"
        elif damage == "written_out_of_range":
            rec["written"] = [7]
        elif damage == "paths_list":
            rec["paths"] = [1, 2]
        elif damage == "deps_int":
            rec["deps"] = 5
        path.write_text(json.dumps(rec))
    assert run_child(PROBE, env=env).split() == ["ok", "True"]
