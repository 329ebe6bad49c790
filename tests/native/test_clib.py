"""The host headers declare the C library functions they use (weft/native/clib.h) instead of including the heavy
standard headers: parsing <cmath> alone cost more g++ time than all of weft.h (docs/compile.md, "What a compile
costs"). These tests keep it that way, and check that the declarations agree with the C library's: a unit that
includes the standard headers too (before or after weft's) still compiles."""

import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NATIVE = os.path.join(ROOT, "weft", "native")
FLAGS = ["-std=c++17", "-O1", "-fopenmp", "-fno-math-errno", "-DWEFT_FFT_RUNTIME=1", "-I", NATIVE]
WEFT = '#include "weft.h"\n#include "mathx.h"\n#include "noise.h"\n#include "geometry/geometry.h"\n'
STANDARD = "".join(f"#include <{h}>\n" for h in ("cmath", "math.h", "cstdio", "cstdlib", "cstring", "limits",
                                                  "type_traits", "algorithm", "vector"))
#: the standard headers weft.h may include on the host (each a few milliseconds of parsing)
ALLOWED = ("cstdint", "stdint.h", "omp.h", "initializer_list")


def _cxx():
    return os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")


pytestmark = pytest.mark.skipif(_cxx() is None, reason="no C++ compiler")


def _syntax(tmp_path, text: str, *extra: str) -> subprocess.CompletedProcess:
    src = tmp_path / "unit.cpp"
    src.write_text(text + "int main() { return 0; }\n")
    return subprocess.run([_cxx(), *FLAGS, *extra, "-fsyntax-only", str(src)], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("order", ["weft first", "standard first"])
def test_declarations_agree_with_the_standard_headers(tmp_path, order):
    text = WEFT + STANDARD if order == "weft first" else STANDARD + WEFT
    out = _syntax(tmp_path, text, "-D_FORTIFY_SOURCE=2")
    assert out.returncode == 0, out.stderr[-3000:]


def test_weft_h_includes_no_heavy_standard_header(tmp_path):
    src = tmp_path / "unit.cpp"
    src.write_text('#include "weft.h"\n')
    out = subprocess.run([_cxx(), *FLAGS, "-M", str(src)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    deps = [d for d in out.stdout.replace("\\\n", " ").split()[1:] if not os.path.abspath(d).startswith(NATIVE)]
    direct = {os.path.basename(d) for d in deps}
    heavy = sorted(direct & {"cmath", "math.h", "cstdio", "stdio.h", "cstdlib", "stdlib.h", "cstring", "string.h",
                             "limits", "type_traits"})
    assert not heavy, f"weft.h pulls in {heavy}: declare what it needs in clib.h instead (allowed: {ALLOWED})"
