"""Builds and runs the C++ self-test of the weft native math headers (weft/native/tests/test_native.cpp).

The C++ test checks every adj_ function against central finite differences in double precision and checks forward
values of the decompositions, inverses, rotations, half conversions and the RNG.  A second test checks the layout
rule the code generator relies on: every forward function sits directly above its adj_ function.
"""
import os
import re
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NATIVE = os.path.join(ROOT, "weft", "native")
MATH_HEADERS = ["half.h", "scalar.h", "vec.h", "mat.h", "quat.h", "transform.h", "spatial.h", "random.h"]


def _cxx():
    return os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")


@pytest.mark.skipif(_cxx() is None, reason="no C++ compiler")
def test_native_cpp(tmp_path):
    exe = str(tmp_path / "test_native")
    src = os.path.join(NATIVE, "tests", "test_native.cpp")
    cmd = [_cxx(), "-std=c++17", "-O1", "-Wall", "-I", NATIVE, src, "-o", exe]
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, "compile failed:\n" + build.stdout + build.stderr
    assert "warning" not in build.stderr, build.stderr
    run = subprocess.run([exe], capture_output=True, text=True, timeout=300)
    print(run.stdout)
    failures = [line for line in run.stdout.splitlines() if line.startswith("FAIL")]
    assert run.returncode == 0, "native test failures:\n" + "\n".join(failures) + "\n" + run.stderr


_DEF = re.compile(r"^\s*WEFT_FN(?:_SMALL)?\b[^;(]*?(operator\S*?|\b\w+)\s*\(")


def _function_names(path):
    with open(path) as f:
        text = f.read()
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    text = re.sub(r"\bWEFT_[A-Z]+\(\w+\)", "RET", text)  # return-type macros such as WEFT_F(T)
    names = []
    for line in text.splitlines():
        m = _DEF.match(line)
        if m:
            names.append(m.group(1))
    return names


@pytest.mark.parametrize("header", MATH_HEADERS)
def test_forward_directly_above_adjoint(header):
    names = _function_names(os.path.join(NATIVE, header))
    assert names, header
    bad = []
    for i, name in enumerate(names):
        if name.startswith("adj_"):
            fwd = name[4:]
            if i == 0 or names[i - 1] != fwd:
                bad.append(f"{name} (preceded by {names[i - 1] if i else None})")
    assert not bad, "{}: adjoints not directly below their forward function: {}".format(header, ", ".join(bad))


_REVERSED_ADDS = r"""
#include "weft.h"
WEFT_DEFINE_ERROR_STATE
#include <cstdio>
// detail::add16_reversed (the deferred backward's add of a descending run of 16 offsets, atomic.h): g[k] += v[15 - k]
// for the element sizes with a vector-permute path (4 and 8 bytes) and one element-by-element size (vec2d, 16)
template <typename T, typename S, int C>
static int check() {
    T g[16], v[16];
    for (int k = 0; k < 16; ++k)
        for (int c = 0; c < C; ++c) {
            reinterpret_cast<S*>(&g[k])[c] = S(k + 1000 * c);
            reinterpret_cast<S*>(&v[k])[c] = S(100 * k + 7 * c);
        }
    weft::detail::add16_reversed<T, S>(reinterpret_cast<char*>(g), v);
    int bad = 0;
    for (int k = 0; k < 16; ++k)
        for (int c = 0; c < C; ++c)
            bad += reinterpret_cast<S*>(&g[k])[c] != S(k + 1000 * c) + S(100 * (15 - k) + 7 * c);
    return bad;
}
int main() {
    const int bad = check<float, float, 1>() + check<double, double, 1>() +
                    check<weft::vec_t<2, float>, float, 2>() + check<weft::vec_t<2, double>, double, 2>();
    printf("%d wrong elements\n", bad);
    return bad != 0;
}
"""


@pytest.mark.skipif(_cxx() is None, reason="no C++ compiler")
def test_reversed_run_adds(tmp_path):
    src, exe = tmp_path / "reversed.cpp", str(tmp_path / "reversed")
    src.write_text(_REVERSED_ADDS)
    cmd = [_cxx(), "-std=c++17", "-O2", "-march=native", "-fopenmp", "-I", NATIVE, str(src), "-o", exe]
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, "compile failed:\n" + build.stdout + build.stderr
    run = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
