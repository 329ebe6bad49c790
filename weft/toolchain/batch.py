"""Several kernel modules compiled as one translation unit, each still its own cache entry.

A program's cold start otherwise runs the compiler once per kernel, each run paying the compiler's start-up, the
header (parsed or loaded precompiled), the assembler and a link, and generating again the helper functions that
every kernel instantiates. A batch compiles the cold kernels of one wave (the other uncompiled kernels of a module
when one of them compiles cold, weft/ahead.py; the kernels ``wp.load_module`` or a simulator prepares) in one
compiler run:

- each member's generated source goes into the unit unchanged, in a namespace of its own (``weft_m<i>``: its
  ``Args``, bodies and structs stay apart), minus its first two lines (``#include "weft.h"`` and the error-state
  definition, which the unit holds once), with its exported entry points renamed by macros (``weft_fwd`` ->
  ``weft_fwd__m<i>``);
- the unit compiles to one object with a section per function (``-ffunction-sections -fdata-sections``);
- each member's shared library is linked from that object (a few milliseconds each): the member's entry points
  under their usual names (``--defsym weft_fwd=weft_fwd__m<i>``), the other members' local, their code dropped
  (``--gc-sections``). So every member has a library of the usual form, loaded and cached exactly like one compiled
  alone, under the same key (the key covers the member's source, the headers, the compiler and the flags, not how it
  was compiled), and editing one kernel later recompiles that kernel alone.

Members are claimed with the cache's per-key build lock, without waiting: a key another process is building is
left to it (the launch that needs it waits for that build as usual). Each member's library is published with the
cache's atomic renames, and a member that is in flight in this process makes ``build_cpu`` wait for its batch. A
batch that does not compile, or a member that does not link, publishes nothing for those members: their launches
compile them alone, and a compile error is then reported for that kernel only.

Only GCC on Linux batches (the lean link, ``options.lean_link``: GNU ld's ``--defsym`` and version scripts), and only
sources of the standard form (``batchable``): one ``#include`` (weft.h) and no code in namespace ``weft`` (the
atomics of struct gradients specialise a template of weft's, which cannot be done inside another namespace).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .. import config
from ..errors import log_debug
from . import cache
from .compiler import find_compiler, run
from .options import CpuOptions, lean_link

#: the first lines of every generated CPU module after its header comment (backend/renderer.py, Renderer.header)
PROLOGUE = '#include "weft.h"\nWEFT_DEFINE_ERROR_STATE\n'
_EXPORT = re.compile(r'^extern "C" WEFT_EXPORT [^(\n]*?\b(\w+)\(', re.MULTILINE)
#: link flags of a batch member's library besides its own symbol aliases and version script
_MEMBER_LINK = ("-Wl,--gc-sections",)
#: the flags that give every function and object its own section, so a member's link keeps only its own code
_SECTIONS = ("-ffunction-sections", "-fdata-sections")
#: a wave is split into several batches (compiled in parallel, one per core) only when each gets at least this much
#: work, in characters of generated source (Member.weight; about 1.3 s of g++ CPU at -O3): every batch pays the
#: compiler's start-up and the header (about 0.1 s of CPU without a precompiled header)
MIN_BATCH_WEIGHT = 40_000


_INCLUDE = '#include "weft.h"\n'


def batchable(source: str) -> bool:
    """Whether a generated CPU module (or a runtime library, toolchain/runtime.py) can join a batch (see the module
    docstring)."""
    return _INCLUDE in source and source.count("#include") == 1 and "namespace weft" not in source and (
        PROLOGUE in source or "WEFT_DEFINE_ERROR_STATE" not in source)


def _body(source: str) -> str:
    """A member's source without the lines the unit holds once."""
    return source.replace(PROLOGUE if PROLOGUE in source else _INCLUDE, "", 1).rstrip("\n")


def available() -> bool:
    """Whether this toolchain batches (``wp.config.batch_compile``, GCC on Linux)."""
    return config.batch_compile and lean_link(find_compiler().is_clang)


@dataclass(frozen=True)
class Member:
    name: str  # the kernel's name, for messages
    source: str
    key: str  # its cache key (toolchain/build.cpu_key; runtime.key for a runtime library)
    #: an estimate of its compile time, in characters of a generated kernel module compiling as long (default: its
    #: source's length; a runtime library's short source instantiates much more code)
    cost: int = 0
    kind: str = "cpu"  # its cache entry's kind (cache.RUNTIME: a runtime library, in the runtime directory)
    #: compile time per unit of weight relative to a straight-line kernel body (which GCC vectorises, the costliest
    #: per character): only for sharing members out between batches (``plan``), not for how many batches to make
    balance: float = 1.0

    @property
    def weight(self) -> int:
        return self.cost or len(self.source)

    @property
    def load(self) -> float:
        """The estimate ``plan`` balances batches by."""
        return self.weight * self.balance

    def exports(self) -> list[str]:
        return sorted(set(_EXPORT.findall(self.source)))


def compose(members: list[Member]) -> str:
    """The batch's translation unit (deterministic: the members in the order given)."""
    parts = [f"// weft: a batch of {len(members)} kernel modules (weft/toolchain/batch.py)", PROLOGUE.rstrip("\n")]
    for i, m in enumerate(members):
        names = m.exports()
        parts += [f"#define {n} {n}__m{i}" for n in names]
        parts += [f"namespace weft_m{i} {{", _body(m.source), f"}}  // weft_m{i}"]
        parts += [f"#undef {n}" for n in names]
    return "\n".join(parts) + "\n"


def _version_script(member: Member) -> str:
    """A member's library exports what it would export compiled alone: its entry points (the aliases under their
    usual names) and the error state; everything else, the other members' renamed entry points included, is
    local, so the link drops their code."""
    errors = ["weft_errors"] if PROLOGUE in member.source else []  # runtime libraries have no error state
    names = "".join(f" {n};" for n in [*member.exports(), *errors])
    return f"{{ global:{names} local: *; }};\n"


@dataclass
class Batch:
    """Members claimed for one compiler run; ``run`` compiles, links and publishes them and always releases them."""

    members: list[Member]
    claims: list[cache.Claim]
    options: CpuOptions
    events: list[threading.Event] = field(default_factory=list)
    published: list[str] = field(default_factory=list)
    error: str = ""  # why nothing was published (compiler output), for tests and verbose mode

    def run(self) -> None:
        try:
            self._build()
        except Exception as exc:  # noqa: BLE001 - nothing published: the members compile alone at their launches
            self.error = self.error or f"{type(exc).__name__}: {exc}"
        finally:
            self.release()

    def release(self) -> None:
        """Free the claims and wake whoever waits for a member (idempotent; also for a batch dropped at exit)."""
        from .build import finish_inflight

        for c in self.claims:
            c.release()
        finish_inflight([m.key for m in self.members], self.events)
        self.events = []

    def _build(self) -> None:
        import time

        from .build import pch_include_dir

        t0 = time.perf_counter()
        cc = find_compiler()
        tmp = cache.build_dir(self.members[0].key)
        try:
            src = tmp / "batch.cpp"
            src.write_text(compose(self.members))
            obj = tmp / "batch.o"
            flags = [f for f in self.options.flags(cc.is_clang) if f != "-shared"]
            pch = pch_include_dir(self.options, start=False)  # used when ready; a batch does not wait for it
            includes = ([f"-I{pch}"] if pch is not None else []) + [f"-I{cache.native_dir()}"]
            result = run([cc.path, *flags, *_SECTIONS, *includes, "-c", str(src), "-o", str(obj)])
            if result.returncode != 0:
                self.error = (result.stderr or result.stdout or "the compiler failed")[-4000:]
                return
            link = _linker(cc.path, tuple(self.options.flags(cc.is_clang)), tuple(self.options.libs(cc.is_clang)))
            for i, (m, claim) in enumerate(zip(self.members, self.claims)):
                out = tmp / f"m{i}.so"
                script = tmp / f"m{i}.map"
                script.write_text(_version_script(m))
                alias = [f"--defsym={n}={n}__m{i}" for n in m.exports()]
                ok = False
                if link is not None:  # the linker itself, without the compiler driver and collect2 around it
                    ok = run(link.command(obj, out, script, alias)).returncode == 0
                if not ok:
                    cmd = [cc.path, *self.options.flags(cc.is_clang), str(obj), *(f"-Wl,{a}" for a in alias),
                           *_MEMBER_LINK, f"-Wl,--version-script={script}", *self.options.libs(cc.is_clang), "-o",
                           str(out)]
                    ok = run(cmd).returncode == 0
                if ok:
                    claim.install(out, keep={"cpp": m.source})
                    self.published.append(m.key)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        if config.debug_messages():
            names = ", ".join(m.name for m in self.members)
            log_debug(f"weft: compiled {len(self.published)} of {len(self.members)} kernels as one unit in "
                  f"{time.perf_counter() - t0:.3f} s: {names}")


@dataclass(frozen=True)
class _Linker:
    """The link command the compiler driver runs for a member (``-###``), with placeholders: running the linker
    directly saves the driver and collect2 processes, about 0.005 s of CPU per member (0.11 -> 0.06 s for NS2D's 9
    links). A link that fails this way is retried through the driver."""

    argv: tuple[str, ...]

    def command(self, obj: Path, out: Path, script: Path, alias: list[str]) -> list[str]:
        subst = {"@OBJ@": str(obj), "@OUT@": str(out), "--version-script=@MAP@": f"--version-script={script}"}
        cmd = []
        for a in self.argv:
            if a == "--defsym=@ALIAS@=@ALIAS@":
                cmd += alias
            else:
                cmd.append(subst.get(a, a))
        return cmd


_linkers: dict[tuple, _Linker | None] = {}


def _linker(cc: str, flags: tuple[str, ...], libs: tuple[str, ...]) -> _Linker | None:
    """The driver's link command for these options, once per process (None when it cannot be had or read)."""
    key = (cc, flags, libs)
    if key not in _linkers:
        _linkers[key] = None
        probe = [cc, *flags, "@OBJ@", "-Wl,--defsym=@ALIAS@=@ALIAS@", *_MEMBER_LINK,
                 "-Wl,--version-script=@MAP@", *libs, "-o", "@OUT@", "-###"]
        ld = run([cc, "-print-prog-name=ld"])
        result = run(probe)
        lines = [ln for ln in (result.stderr or "").splitlines() if ln.startswith(" ") and "collect2" in ln]
        ld_path = shutil.which((ld.stdout or "").strip() or "ld")
        if result.returncode == 0 and len(lines) == 1 and ld_path:
            argv = shlex.split(lines[0])
            if os.path.basename(argv[0]) == "collect2":
                keep, skip = [ld_path], False
                for a in argv[1:]:  # the LTO plugin collect2 loads (with its temp files): not needed here
                    if skip:
                        skip = False
                    elif a == "-plugin":
                        skip = True
                    elif not a.startswith("-plugin-opt="):
                        keep.append(a)
                if all(any(x in a for a in keep) for x in ("@OBJ@", "@OUT@", "@MAP@", "@ALIAS@")):
                    _linkers[key] = _Linker(tuple(keep))
    return _linkers[key]


def plan(members: list[Member], options: CpuOptions, parts: int) -> list[Batch]:
    """Claim the members that are batchable, not cached and not being built by another process, mark them in
    flight in this process, and split them into at most ``parts`` batches of similar weight, each of at least
    MIN_BATCH_WEIGHT (the first member goes into the first batch). Batches of one member are not made: that member compiles alone as usual."""
    from .build import start_inflight

    if not available():
        return []
    seen: set[str] = set()
    todo: list[Member] = []
    for m in members:
        if m.key in seen or not batchable(m.source):
            continue
        seen.add(m.key)
        todo.append(m)
    if len(todo) < 2:
        return []
    claimed: list[tuple[Member, cache.Claim]] = []
    try:
        for m in todo:
            claim = cache.try_claim(m.kind, m.key, "so")
            if claim is not None:
                claimed.append((m, claim))
    except cache.CacheError:
        for _, c in claimed:
            c.release()
        return []  # an unusable cache: the ordinary compiles report it
    if len(claimed) < 2:
        for _, c in claimed:
            c.release()
        return []
    parts = max(1, min(parts, len(claimed) // 2, sum(m.weight for m, _ in claimed) // MIN_BATCH_WEIGHT))
    groups: list[list[tuple[Member, cache.Claim]]] = [[] for _ in range(parts)]
    sizes = [0.0] * parts
    first, rest = claimed[0], sorted(claimed[1:], key=lambda mc: -mc[0].load)
    for mc in [first, *rest]:  # heaviest first into the lightest group (deterministic for a given list)
        g = sizes.index(min(sizes)) if mc is not first else 0
        groups[g].append(mc)
        sizes[g] += mc[0].load
    batches = []
    for g in groups:
        if len(g) < 2:
            for _, c in g:
                c.release()
            continue
        g.sort(key=lambda mc: claimed.index(mc))  # the unit lists members in the caller's order
        ms = [m for m, _ in g]
        batches.append(Batch(ms, [c for _, c in g], options, events=start_inflight([m.key for m in ms])))
    return batches
