"""CUDA C++ source -> CUBIN (or PTX) with NVRTC from NVIDIA's pip wheel, through the kernel cache.

NVRTC runs without a GPU or driver, so CI compile-checks every kernel's CUDA output. The library is reached through
``cuda.bindings.nvrtc`` (``pip install 'weft-lang[cuda]'``), which finds ``libnvrtc`` inside the
``nvidia-cuda-nvrtc-cu12`` wheel; no CUDA toolkit install is needed. Cache keys follow the CPU rules (source, headers,
weft version, options) plus the NVRTC version and the target architecture.
"""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .. import __version__ as WEFT_VERSION
from .. import config
from ..errors import ToolchainError, log_debug
from . import cache

_INSTALL_HINT = ("NVRTC is not available: install weft's CUDA extra with  pip install 'weft-lang[cuda]'  "
                 "(it brings cuda-bindings and nvidia-cuda-nvrtc-cu12 from PyPI; no CUDA toolkit is needed)")


@dataclass(frozen=True, slots=True)
class NvrtcOptions:
    """Options of one NVRTC compilation; their flags are part of the cache key."""

    arch: int  # 80 for sm_80, 90 for sm_90, ...
    debug: bool = False  # line info for profilers and cuda-gdb; the bounds checks come from the renderer
    output: str = "cubin"  # "cubin" (loads on any driver that knows the arch) or "ptx" (JIT by the driver)
    fast_math: bool = False
    extra: tuple[str, ...] = ()
    arch_suffix: str = ""  # "a" (sm_90a: architecture-specific features) or "f" (family features), as Warp's option

    def flags(self) -> list[str]:
        target = (f"sm_{self.arch}" if self.output == "cubin" else f"compute_{self.arch}") + self.arch_suffix
        flags = ["-std=c++17", f"--gpu-architecture={target}", f"--include-path={cache.native_dir()}",
                 "--extra-device-vectorization", "-w"]
        if self.fast_math:
            flags.append("--use_fast_math")
        if self.debug:
            flags.append("-lineinfo")
        return flags + list(self.extra)


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        try:  # cuda-python < 12.6 layout
            from cuda import nvrtc  # type: ignore[no-redef]
        except ImportError:
            raise ToolchainError(_INSTALL_HINT) from None
    return nvrtc


def _check(result, what: str):
    """Unpack a cuda-bindings result tuple, raising on an NVRTC error."""
    err, *values = result
    if int(err) != 0:
        raise ToolchainError(f"NVRTC {what} failed: {err!r}")
    return values[0] if len(values) == 1 else tuple(values)


@functools.cache
def version() -> tuple[int, int]:
    """NVRTC's (major, minor); raises ToolchainError when NVRTC cannot be loaded."""
    nvrtc = _nvrtc()
    try:
        return tuple(_check(nvrtc.nvrtcVersion(), "version"))
    except ToolchainError:
        raise
    except Exception as exc:  # noqa: BLE001 - the wheel is missing or libnvrtc failed to load
        raise ToolchainError(f"{_INSTALL_HINT}\n  ({type(exc).__name__}: {exc})") from None


@functools.cache
def supported_archs() -> tuple[int, ...]:
    return tuple(_check(_nvrtc().nvrtcGetSupportedArchs(), "arch query"))


def is_available() -> bool:
    try:
        version()
    except ToolchainError:
        return False
    return True


def target_arch(device_arch: int) -> int:
    """The newest architecture NVRTC knows that a device of ``device_arch`` can run (a CUBIN must not be newer)."""
    archs = [a for a in supported_archs() if a <= device_arch]
    if not archs:
        raise ToolchainError(f"this NVRTC ({'.'.join(map(str, version()))}) cannot target sm_{device_arch}")
    return max(archs)


def cuda_key(source: str, options: NvrtcOptions) -> str:
    major, minor = version()
    return cache.make_key("cuda", WEFT_VERSION, cache.source_identity(source), cache.headers_digest(), f"nvrtc-{major}.{minor}",
                          " ".join(options.flags()), f"sm_{options.arch}", options.output)


_loaded: dict[str, bytes] = {}
_lock = threading.Lock()


def build_cuda(source: str, options: NvrtcOptions, name: str) -> bytes:
    """Compile (or fetch from the cache) a CUDA module; returns the CUBIN/PTX image for cuModuleLoadData."""
    key = cuda_key(source, options)
    with _lock:
        image = _loaded.get(key)
    if image is not None:
        return image
    ext = options.output
    path = cache.lookup("cuda", key, ext)
    if path is None:
        t0 = time.perf_counter()
        built = []  # stays empty when another process compiled it while this one waited for the build lock

        def compile_into(tmp):
            built.append(True)
            return _compile_to(tmp, source, options, name, key)

        path = cache.publish("cuda", key, ext, compile_into, keep={"cu": source})
        if config.verbose:
            done = "NVRTC compiled" if built else "waited for another process to NVRTC-compile"
            log_debug(f"weft: {done} {name} for sm_{options.arch} in {time.perf_counter() - t0:.3f} s -> {path}")
    elif config.verbose:
        log_debug(f"weft: loaded {name} (sm_{options.arch}) from cache {path}")
    image = path.read_bytes()
    with _lock:
        _loaded[key] = image
    return image


def _compile_to(tmp: Path, source: str, options: NvrtcOptions, name: str, key: str) -> Path:
    out = tmp / f"module.{options.output}"
    out.write_bytes(compile_source(source, options, name, key))
    return out


def compile_source(source: str, options: NvrtcOptions, name: str, key: str | None = None) -> bytes:
    """Run NVRTC once (no cache). Raises ToolchainError with the log, the kept source and a repro on failure."""
    version()  # a clear error when NVRTC is missing
    nvrtc = _nvrtc()
    flags = options.flags()
    prog = _check(nvrtc.nvrtcCreateProgram(source.encode(), f"{name}.cu".encode(), 0, [], []), "create")
    try:
        encoded = [f.encode() for f in flags]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(encoded), encoded)
        log = _program_log(nvrtc, prog)
        if int(err) != 0:
            _fail(source, options, name, key or cache.make_key(source), log)
        if options.output == "cubin":
            size = _check(nvrtc.nvrtcGetCUBINSize(prog), "CUBIN size")
            buf = b" " * size
            _check(nvrtc.nvrtcGetCUBIN(prog, buf), "CUBIN")
        else:
            size = _check(nvrtc.nvrtcGetPTXSize(prog), "PTX size")
            buf = b" " * size
            _check(nvrtc.nvrtcGetPTX(prog, buf), "PTX")
        return bytes(buf)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _program_log(nvrtc, prog) -> str:
    size = _check(nvrtc.nvrtcGetProgramLogSize(prog), "log size")
    buf = b" " * size
    nvrtc.nvrtcGetProgramLog(prog, buf)
    return buf.rstrip(b"\0 ").decode(errors="replace")


def _fail(source: str, options: NvrtcOptions, name: str, key: str, log: str) -> None:
    failed = cache.root() / "failed"
    failed.mkdir(exist_ok=True, mode=0o700)
    keep = failed / f"{name}-{key[:12]}-sm_{options.arch}.cu"
    keep.write_text(source)
    log_path = keep.with_suffix(".log")
    log_path.write_text(log)
    repro = (f"python -m weft.toolchain.nvrtc {keep} --arch {options.arch}"
             + (" --ptx" if options.output == "ptx" else ""))
    excerpt = "\n".join(log.splitlines()[:30])
    raise ToolchainError(
        f"internal error: NVRTC rejected the CUDA code weft generated for '{name}' (sm_{options.arch}). This is a "
        f"weft bug, not an error in your program; please report it.\n  generated source: {keep}\n"
        f"  NVRTC log: {log_path}\n  reproduce: {repro}\n{excerpt}")


def main(argv: list[str] | None = None) -> int:
    """``python -m weft.toolchain.nvrtc FILE.cu --arch 90``: compile a kept source again, print the log."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("source")
    parser.add_argument("--arch", type=int, default=90)
    parser.add_argument("--ptx", action="store_true")
    args = parser.parse_args(argv)
    opts = NvrtcOptions(arch=args.arch, output="ptx" if args.ptx else "cubin")
    try:
        image = compile_source(Path(args.source).read_text(), opts, Path(args.source).stem)
    except ToolchainError as exc:
        print(exc)
        return 1
    print(f"ok: {len(image)} bytes of {opts.output} for sm_{args.arch}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
