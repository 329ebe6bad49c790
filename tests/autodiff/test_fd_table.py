"""Every case of the op table: Tape gradient of L = sum_i w_i . out_i against float64 central differences.

Compiling a kernel costs far more than running it (g++ and the NVRTC check have a large fixed cost per module), so
the element-wise cases of a domain share kernels, up to ``CHUNK`` cases each: ``fd_table_<domain>_<k>(which, <one
array per input slot>, <one array per output dtype>)`` runs ``out[i] = func_which(...)`` behind ``if which == j`` for
case j, and each test launches it with its own case index, input arrays and output array (the slots it does not use
get a one-element array that is never read). ~200 cases compile ~50 kernels (~30 shared ones) instead of ~195.
Each case remains its own test, with the same inputs, loss and assertion as with a kernel of its own. Ready kernels
(atomics, 2-D access, mesh queries) are launched as they are.
"""

# no `from __future__ import annotations`: the kernels below take their dtypes from the closure
import linecache
import zlib
from collections import Counter

import numpy as np
import pytest

import weft as wp

from .op_table import TABLE, Case


class _DomainKernel:
    """One kernel for every element-wise case of a domain; ``args`` binds one case's arrays to its parameters."""

    def __init__(self, domain: str, cases: list[Case]):
        self.domain = domain
        self.which = {id(c): j for j, c in enumerate(cases)}
        # input slots: each dtype as many times as one case takes it; output slots: one per output dtype
        need: Counter = Counter()
        for c in cases:
            for t, m in Counter(c.inputs).items():
                need[t] = max(need[t], m)
        self.in_slots = [(t, k) for t in need for k in range(need[t])]
        self.out_slots = list(dict.fromkeys(c.output for c in cases))
        self._dummies: dict[int, object] = {}
        self.kernel = self._build(cases)

    def _inputs_of(self, c: Case) -> list[int]:
        """The input slot of each of the case's inputs."""
        seen: Counter = Counter()
        slots = []
        for t in c.inputs:
            slots.append(self.in_slots.index((t, seen[t])))
            seen[t] += 1
        return slots

    def _build(self, cases: list[Case]):
        g = {"wp": wp, "__name__": __name__}
        params = ["which: int"]
        for s, (t, _) in enumerate(self.in_slots):
            g[f"I{s}"] = t
            params.append(f"in{s}: wp.array(dtype=I{s})")
        for s, t in enumerate(self.out_slots):
            g[f"O{s}"] = t
            params.append(f"out{s}: wp.array(dtype=O{s})")
        name = f"fd_table_{self.domain}"
        lines = [f"def {name}({', '.join(params)}):", "    i = wp.tid()"]
        for j, c in enumerate(cases):
            g[f"f{j}"] = c.func
            args = ", ".join(f"in{s}[i]" for s in self._inputs_of(c))
            lines += [f"    if which == {j}:  # {c.label}",
                      f"        out{self.out_slots.index(c.output)}[i] = f{j}({args})"]
        text = "\n".join(lines) + "\n"
        # the frontend reads kernel source through linecache, as for a kernel defined in a file
        file = f"<{__name__}: {name}>"
        linecache.cache[file] = (len(text), None, text.splitlines(True), file)
        exec(compile(text, file, "exec"), g)  # noqa: S102 - the kernel source generated above
        return wp.kernel(g[name])

    def _dummy(self, s: int, dtype):
        if s not in self._dummies:
            self._dummies[s] = wp.zeros(1, dtype=dtype)
        return self._dummies[s]

    def args(self, c: Case, ins: list, out) -> list:
        arrays = [self._dummy(s, t) for s, (t, _) in enumerate(self.in_slots)]
        for s, a in zip(self._inputs_of(c), ins):
            arrays[s] = a
        outs = [self._dummy(len(self.in_slots) + s, t) for s, t in enumerate(self.out_slots)]
        outs[self.out_slots.index(c.output)] = out
        return [self.which[id(c)], *arrays, *outs]


#: cases per shared kernel: NVRTC's time grows faster than linearly with a kernel's size (the 45 vector cases in one
#: kernel: 18 s of NVRTC; in chunks of 8-15: 7-9 s), while g++ costs ~0.4-1.5 s per module whatever its size
CHUNK = 10
#: ops whose adjoints are large enough that NVRTC time explodes when several share a kernel (nine of them in one
#: kernel: 50 s of NVRTC): each case keeps a kernel of its own
HEAVY = frozenset({"svd3", "qr3", "eig3", "polar_decomposition"})
_KERNELS: dict[tuple[str, int], _DomainKernel] = {}


def _chunks(domain: str) -> list[list[Case]]:
    """The domain's element-wise cases in table order, in chunks of at most CHUNK cases (HEAVY ones alone)."""
    chunks: list[list[Case]] = [[]]
    for e in TABLE:
        if e.domain != domain:
            continue
        for c in e.cases:
            if c.kernel is not None:
                continue
            if e.name in HEAVY:
                chunks += [[c], []]
                continue
            if len(chunks[-1]) == CHUNK:
                chunks.append([])
            chunks[-1].append(c)
    return [chunk for chunk in chunks if chunk]


def _domain_kernel(domain: str, c: Case) -> _DomainKernel:
    chunks = _chunks(domain)
    k = next(k for k, chunk in enumerate(chunks) if any(x is c for x in chunk))
    if (domain, k) not in _KERNELS:
        _KERNELS[(domain, k)] = _DomainKernel(f"{domain}_{k}", chunks[k])
    return _KERNELS[(domain, k)]


def _launcher(domain: str, c: Case):
    """(kernel, args(ins, out)) for one case."""
    if c.kernel is not None:
        return c.kernel, lambda ins, out: [*ins, out]
    dk = _domain_kernel(domain, c)
    return dk.kernel, lambda ins, out: dk.args(c, ins, out)


def _cases():
    for e in TABLE:
        for c in e.cases:
            yield pytest.param(e.domain, e.name, c, id=f"{e.domain}.{e.name}[{c.label}]")


def _loss(out_np: np.ndarray, w: np.ndarray) -> float:
    return float(np.sum(out_np.astype(np.float64) * w))


@pytest.mark.parametrize(("domain", "op", "c"), list(_cases()))
def test_op_gradient_matches_finite_differences(domain: str, op: str, c: Case):
    rng = np.random.default_rng(zlib.crc32(c.label.encode()))
    kernel, bind = _launcher(domain, c)
    dim = c.dim or c.n
    values = c.draw(rng)
    ins = [wp.array(v, dtype=t, requires_grad=True) for v, t in zip(values, c.inputs)]
    out_shape = c.dim or (c.out_len or c.n)
    out = wp.zeros(out_shape, dtype=c.output, requires_grad=True)
    args = bind(ins, out)
    init = np.full(out.numpy().shape, c.out_init)
    w = rng.normal(size=out.numpy().shape)
    what = f"{domain}.{op} [{c.label}]"

    def forward() -> float:
        out.numpy()[...] = init
        wp.launch(kernel, dim=dim, inputs=args)
        return _loss(out.numpy(), w)

    tape = wp.Tape()
    out.numpy()[...] = init
    with tape:
        wp.launch(kernel, dim=dim, inputs=args)
    tape.backward(grads={out: w})
    ad = [np.array(a.grad.numpy(), dtype=np.float64) for a in ins]
    assert all(np.isfinite(g).all() for g in ad), f"{what}: autodiff gradient has non-finite values"

    for k, a in enumerate(ins):
        x = a.numpy()
        flat = x.reshape(-1)
        fd = np.zeros(flat.size)
        for j in range(flat.size):
            x0 = flat[j]
            flat[j] = x0 + c.eps
            plus = forward()
            flat[j] = x0 - c.eps
            minus = forward()
            flat[j] = x0
            fd[j] = (plus - minus) / (2 * c.eps)
        fd = fd.reshape(ad[k].shape)
        np.testing.assert_allclose(ad[k], fd, rtol=c.rtol, atol=c.atol,
                                   err_msg=f"{what}: d loss / d input {k}: autodiff vs central differences")
