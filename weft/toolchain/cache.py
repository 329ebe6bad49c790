"""On-disk cache of compiled kernels.

Layout: ``<root>/<kind>/<key[:2]>/<key>.ref`` names the binary ``<key>-<digest>.<ext>`` beside it. Binaries are
written to a private temp file and renamed into place, then the ``.ref`` is replaced atomically, so readers
always see a complete entry; a binary whose content does not match its digest (truncated, corrupt) is rebuilt.
Processes building the same key at once (xdist workers, MPI ranks, two scripts) take turns on a per-key lock file
(``.<key>.lock`` beside the entry): the first builds, the others wait and then load its binary instead of compiling
the same source again. Where no lock can be had (no ``fcntl``, a file system without locks, a holder stuck past
``LOCK_WAIT_S``) each builds and publishes a complete binary and one ``.ref`` wins.

Entries of kind RUNTIME (weft's runtime libraries) use the same layout and rules under another root, the runtime
library directory (``wp.config.runtime_cache_dir``), so every kernel cache of the machine shares them and emptying a
kernel cache keeps them.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from .. import config
from ..errors import CacheError

try:
    import fcntl
except ImportError:  # not POSIX: no build lock; concurrent builds stay correct (atomic publish)
    fcntl = None


def digest_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def native_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "native"


@functools.cache
def headers_digest() -> str:
    """Digest of every native header's content, remembered per (name, size, mtime) so a warm start stats the
    headers instead of hashing them."""
    paths = sorted(native_dir().rglob("*.h"))
    stamp = hashlib.sha256()
    for path in paths:
        st = path.stat()
        stamp.update(f"{path.name}|{st.st_size}|{st.st_mtime_ns}".encode())
    memo = root() / f"headers-{stamp.hexdigest()[:24]}.digest"
    try:
        text = memo.read_text()
        if len(text) == 64:
            return text
    except OSError:
        pass
    h = hashlib.sha256()
    for path in paths:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    digest = h.hexdigest()
    try:
        _atomic_write(memo, digest)
    except OSError:
        pass
    return digest


_LINE_FILE = re.compile(r'^([ \t]*#[ \t]*line[ \t]+\d+)[ \t]+"[^"\n]*"[ \t]*$', re.MULTILINE)


def source_identity(source: str) -> str:
    """What of a generated source the cache key covers: the text with the file names of ``#line`` directives
    removed. Those name the user's Python file (for debuggers); they do not change the code, and keying on them
    would make a copied script or a re-run notebook cell (new file name) compile again. The source that is compiled
    keeps them, so the first build's debug information names its own file."""
    return _LINE_FILE.sub(r"\1", source) if "#line" in source else source


def make_key(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()[:40]


_checked_roots: set[str] = set()

#: The kind of the runtime libraries' entries (toolchain/runtime.py): kept under ``config.runtime_dir()``, outside
#: the kernel cache, and shared by every kernel cache of the machine.
RUNTIME = "runtime"


def _checked(path: Path, what: str) -> Path:
    key = str(path)
    if key not in _checked_roots:
        try:
            path.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise CacheError(f"cannot create the {what} directory {path}: {exc}") from None
        check_safe(path)
        _checked_roots.add(key)
    return path


def root() -> Path:
    return _checked(config.cache_dir(), "kernel cache")


def runtime_root() -> Path:
    """The runtime library directory (``wp.config.runtime_cache_dir``), created and checked like the cache's root."""
    return _checked(config.runtime_dir(), "runtime library")


def kind_root(kind: str) -> Path:
    """The root holding entries of ``kind``: the runtime directory for RUNTIME, else the kernel cache."""
    return runtime_root() if kind == RUNTIME else root()


def _base_of(d: Path) -> Path:
    """The root (runtime directory or kernel cache) that ``d`` lies in (the inner one when they nest)."""
    rt, kc = config.runtime_dir(), config.cache_dir()
    if d.is_relative_to(rt) and (not d.is_relative_to(kc) or len(rt.parts) >= len(kc.parts)):
        return runtime_root()
    return root()


def check_safe(path: Path) -> None:
    """Refuse a cache directory that other users could write: they could plant native code we would load."""
    st = path.stat()
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise CacheError(
            f"the kernel cache directory {path} belongs to another user (uid {st.st_uid}); weft will not load "
            "native code from it. Set wp.config.kernel_cache_dir (or WEFT_CACHE_DIR) to a directory you own.")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise CacheError(
            f"the kernel cache directory {path} is writable by other users (mode {stat.filemode(st.st_mode)}); "
            f"weft will not load native code from it. Run `chmod go-w {path}` or choose another directory "
            "with wp.config.kernel_cache_dir.")


# ---- trust: native code is loaded only from paths no other user can write
# The root is checked once (check_safe). Below it, every directory on the way to an entry and the entry's files must
# be owned by the current user, must not be writable by group or others, and must not be symbolic links: a planted
# library in a foreign-owned or world-writable subdirectory is refused (CacheError) and never loaded. An entry file
# that fails the check in a trusted directory (e.g. group-writable from an old umask) is deleted and rebuilt.
_trusted_dirs: set[str] = set()


def _untrusted(path: Path, st: os.stat_result) -> str:
    """Why ``path`` (lstat ``st``) cannot be trusted, or ''."""
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"belongs to another user (uid {st.st_uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is writable by other users (mode {stat.filemode(st.st_mode)})"
    return ""


def check_tree(d: Path) -> None:
    """Raise CacheError unless every directory from the cache root down to ``d`` (inside it) is trusted."""
    key = str(d)
    if key in _trusted_dirs:
        return
    base = _base_of(d)
    cur = base
    for part in d.relative_to(base).parts:
        cur = cur / part
        if str(cur) in _trusted_dirs:
            continue
        try:
            st = os.lstat(cur)
        except FileNotFoundError:
            return  # nothing there yet: the caller creates it (mode 0700) and checks again
        why = _untrusted(cur, st) or ("" if stat.S_ISDIR(st.st_mode) else "is not a directory")
        if why:
            raise CacheError(f"the cache directory {cur} {why}; weft will not load native code from it. "
                             f"Remove it (weft recreates it) or run `chmod go-w {cur}`.")
        _trusted_dirs.add(str(cur))


def trusted_file(path: Path) -> bool:
    """True if ``path`` is a regular file weft may load: its directories pass check_tree (else CacheError) and the
    file itself is owned by the current user and writable by no one else. An untrusted file is deleted."""
    check_tree(path.parent)
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not _untrusted(path, st) and stat.S_ISREG(st.st_mode):
        return True
    _remove(path)
    return False


def _entry_dir(kind: str, key: str) -> Path:
    return kind_root(kind) / kind / key[:2]


def lookup(kind: str, key: str, ext: str) -> Path | None:
    """The verified binary for ``key``, or None (missing, truncated or corrupt entries count as missing)."""
    d = _entry_dir(kind, key)
    ref = d / f"{key}.ref"
    if not trusted_file(ref):
        return None
    try:
        name = ref.read_text().strip()
    except OSError:
        return None
    path = d / name
    if "/" in name or not trusted_file(path):
        return None
    expected = name[len(key) + 1:].split(".", 1)[0]
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not name.startswith(key + "-") or digest_bytes(data)[:16] != expected:
        _remove(path)
        return None
    return path


# ---- orphaned build directories
# A build works in <root>/.build-<key8>-<host>-<pid>-<random>; a killed process leaves it behind. The first build of
# a process removes those whose process is gone (same host, pid not running) or that have not changed for an hour
# (compiles time out after 10 minutes, so no build still uses them); never a live build's.
_HOST = hashlib.sha256(os.uname().nodename.encode() if hasattr(os, "uname") else b"").hexdigest()[:8]
_ORPHAN_AGE_S = 3600.0
_swept: set[str] = set()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def sweep_orphans(now: float | None = None) -> list[Path]:
    """Remove orphaned ``.build-*`` directories from the cache root (once per process); returns those removed."""
    import time

    base = root()
    if str(base) in _swept and now is None:
        return []
    _swept.add(str(base))
    now = time.time() if now is None else now
    removed = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return removed
    for e in entries:
        if not e.name.startswith(".build-"):
            continue
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            continue
        parts = e.name.split("-")  # ['.build', key8, host, pid, random] (older weft: no host/pid)
        mine = len(parts) >= 5 and parts[2] == _HOST and parts[3].isdigit()
        dead = mine and int(parts[3]) != os.getpid() and not _pid_alive(int(parts[3]))
        if dead or now - st.st_mtime > _ORPHAN_AGE_S:
            shutil.rmtree(e.path, ignore_errors=True)
            removed.append(Path(e.path))
    return removed


def evict(kind: str, key: str) -> None:
    """Forget the entry for ``key`` (its binary could not be loaded): the next lookup misses and it is rebuilt."""
    _remove(_entry_dir(kind, key) / f"{key}.ref")


def publish(kind: str, key: str, ext: str, build: Callable[[Path], Path], keep: dict[str, str] | None = None) -> Path:
    """Build into a private temp dir with ``build(tmpdir) -> binary`` and publish atomically.

    Raises CacheError when the cache cannot be written (read-only directory, full disk, ...)."""
    try:
        return _publish(kind, key, ext, build, keep)
    except OSError as exc:
        raise _write_error(kind, exc) from None


def _write_error(kind: str, exc: OSError) -> CacheError:
    where = f" ({exc.filename})" if exc.filename else ""
    what, option = (("runtime library directory", "runtime_cache_dir") if kind == RUNTIME else
                    ("kernel cache", "kernel_cache_dir"))
    return CacheError(f"cannot write the {what} {kind_root(kind)}: {exc.strerror or exc}{where}; free space, fix "
                      f"its permissions or choose another directory with wp.config.{option}")


def _publish(kind: str, key: str, ext: str, build: Callable[[Path], Path], keep: dict[str, str] | None) -> Path:
    d = _entry_dir(kind, key)
    check_tree(d)
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    check_tree(d)
    with build_lock(d, key):
        done = lookup(kind, key, ext)  # published by another process while this one waited for the lock
        return done if done is not None else _build_and_publish(d, key, ext, build, keep)


LOCK_WAIT_S = 900.0  # longer than a compile may take (compiler.run times out after 600 s)


@contextlib.contextmanager
def build_lock(d: Path, key: str):
    """Hold the per-key build lock in entry directory ``d`` (released when the block ends or the process dies)."""
    fd = -1
    if fcntl is not None:
        try:
            fd = os.open(d / f".{key}.lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except OSError:
            fd = -1
    try:
        if fd >= 0:
            _acquire(fd)
        yield
    finally:
        if fd >= 0:
            os.close(fd)  # releases the lock


def _acquire(fd: int) -> None:
    deadline = time.monotonic() + LOCK_WAIT_S
    pause = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                return  # a stuck holder: build without the lock
        except OSError:
            return  # the file system has no locks
        time.sleep(pause)
        pause = min(2 * pause, 0.1)


def _build_and_publish(d: Path, key: str, ext: str, build: Callable[[Path], Path],
                       keep: dict[str, str] | None) -> Path:
    tmp = build_dir(key)
    try:
        return _install(d, key, ext, build(tmp), keep)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def build_dir(key: str) -> Path:
    """A private temp directory for a build (an orphan once its process is gone: see sweep_orphans)."""
    sweep_orphans()
    return Path(tempfile.mkdtemp(prefix=f".build-{key[:8]}-{_HOST}-{os.getpid()}-", dir=root()))


def _install(d: Path, key: str, ext: str, binary: Path, keep: dict[str, str] | None) -> Path:
    """Copy a built binary into entry directory ``d`` under its digest, then point ``key``'s ``.ref`` at it (each
    step an atomic rename: readers see the old entry or the complete new one)."""
    data = binary.read_bytes()
    dig = digest_bytes(data)[:16]
    final = d / f"{key}-{dig}.{ext}"
    if not trusted_file(final) or digest_bytes(final.read_bytes())[:16] != dig:
        staged = d / f".{key}-{dig}.{os.getpid()}.tmp"
        shutil.copyfile(binary, staged)
        os.chmod(staged, 0o700)  # whatever the umask: a group-writable binary would not be trusted
        os.replace(staged, final)
    for name, text in (keep or {}).items():
        _atomic_write(d / f"{key}.{name}", text)
    _atomic_write(d / f"{key}.ref", final.name)
    return final


class Claim:
    """The build lock of one key, taken without waiting (a batch builds only the keys no other process is building).
    ``install`` publishes a binary built elsewhere under the key; ``release`` (or process exit) frees the lock."""

    def __init__(self, kind: str, key: str, ext: str, fd: int):
        self.kind, self.key, self.ext, self._fd = kind, key, ext, fd

    def install(self, binary: Path, keep: dict[str, str] | None = None) -> Path:
        try:
            return _install(_entry_dir(self.kind, self.key), self.key, self.ext, binary, keep)
        except OSError as exc:
            raise _write_error(self.kind, exc) from None

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def try_claim(kind: str, key: str, ext: str) -> Claim | None:
    """The build lock of ``key`` if no other process holds it and the cache does not hold the key, else None. Where
    the file system has no locks the claim is granted (concurrent builds stay correct: atomic publish)."""
    d = _entry_dir(kind, key)
    check_tree(d)
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    check_tree(d)
    fd = -1
    if fcntl is not None:
        try:
            fd = os.open(d / f".{key}.lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except OSError:
            fd = -1
    if fd >= 0:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except OSError:
            pass  # the file system has no locks
    claim = Claim(kind, key, ext, fd)
    if lookup(kind, key, ext) is not None:  # published by another process since the caller looked
        claim.release()
        return None
    return claim


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        _remove(Path(tmp))
        raise


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def clear() -> None:
    """Delete every cached kernel (``wp.clear_kernel_cache()``)."""
    path = config.cache_dir()
    if not path.exists():
        return
    for child in path.iterdir():
        if child.is_dir():
            shutil.rmtree(child, ignore_errors=True)
        else:
            _remove(child)
