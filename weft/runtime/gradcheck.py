"""Gradient debugging: Jacobians by autodiff and by central differences, and a check that they agree.

``wp.autograd.jacobian`` seeds one output component at a time with 1 (a one-hot row) and runs the Tape
backward, reading one row of every requested Jacobian from the inputs' ``.grad``. ``jacobian_fd`` perturbs one
input component at a time by +-eps and re-runs the forward pass (outputs restored to their values before the
first launch each time, so kernels that accumulate with atomics see the same starting state). ``gradcheck``
compares the two. Jacobians are NumPy arrays of shape ``(output components, input components)``, where an
array's components are its elements flattened with the scalars of vector / matrix dtypes; they are returned
as dicts keyed by ``(input index, output index)``: the position in ``inputs`` and in ``outputs`` (for a Python
function, in the list of arrays it returns).

Only arrays with ``requires_grad=True`` and a float dtype take part. Struct arguments are passed through but
not differentiated, as in Warp.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import BackwardDisabledError, Error
from ..types.dtypes import np_layout
from .tape import active_tape


class GradcheckError(Error, ValueError):
    """Autodiff and finite-difference gradients disagree (a ``ValueError`` too, as in Warp)."""


class MaskError(Error, ValueError):
    """An ``input_output_mask`` entry names no input or output (a ``ValueError`` too, as in Warp)."""


# ---------------------------------------------------------------------------------------------- array helpers
def _is_array(x) -> bool:
    from .array import array

    return isinstance(x, array)


def _is_float_array(x) -> bool:
    if not _is_array(x):
        return False

    try:
        base, _ = np_layout(x._ir)
    except TypeError:
        return False
    return base.kind == "f"


def _values(a) -> np.ndarray:
    """A flat float64 copy of every scalar component of ``a``."""
    return np.array(a.numpy(), dtype=np.float64).reshape(-1)


def _set_values(a, flat: np.ndarray) -> None:
    """Write ``flat`` (all scalar components) into ``a`` without recording anything on a Tape."""
    host = a.numpy()
    values = flat.reshape(host.shape) if flat.dtype == host.dtype else np.asarray(flat, host.dtype).reshape(host.shape)
    if a.device.impl.host_memory:
        host[...] = values
        a._mark_written()
    else:
        with _no_tape():
            a.assign(values)


def _grad_values(a) -> np.ndarray:
    return _values(a.grad) if a.grad is not None else np.zeros(_n_components(a))


def _n_components(a) -> int:
    return int(np.prod(a.numpy().shape, dtype=np.int64))


@contextlib.contextmanager
def _restored(inputs):
    """Yield ``[(array, its values)]`` of the array inputs among ``inputs`` and write the values back on exit
    (also when the body raises)."""
    saved = [(a, a.numpy().copy()) for a in inputs if _is_array(a) and a.size > 0]
    try:
        yield saved
    finally:
        for a, v in saved:
            _set_values(a, v)


@contextlib.contextmanager
def _read_flags_kept(arrays):
    """Keep the read flags (``wp.config.verify_autograd_array_access``) of ``arrays`` as they were: the check's own
    tape clears the flags it set, which must not erase those of a tape the caller is still recording."""
    saved = [(a._shared, a._shared.is_read) for a in arrays if _is_array(a) and hasattr(a._shared, "is_read")]
    try:
        yield
    finally:
        for shared, flag in saved:
            shared.is_read = flag


@contextlib.contextmanager
def _no_tape():
    token = active_tape.set(None)
    try:
        yield
    finally:
        active_tape.reset(token)


# ---------------------------------------------------------------------------------------------- the problem
@dataclass
class _Problem:
    """A kernel launch or a Python function, with its differentiable inputs and outputs named and indexed."""

    function: object
    is_kernel: bool
    dim: object
    inputs: list
    outputs: list  # kernels: the output arguments; functions: filled by the first evaluation
    device: object
    max_blocks: int
    block_dim: int
    input_names: list[str]
    output_names: list[str]

    def run(self, record: bool = False):
        """Evaluate once; return the output arrays."""
        from .launch import launch

        if self.is_kernel:
            launch(self.function, dim=self.dim, inputs=self.inputs, outputs=self.outputs, device=self.device,
                   max_blocks=self.max_blocks, block_dim=self.block_dim, record_tape=record)
            return self.outputs
        result = self.function(*self.inputs)
        if result is None:
            raise Error("jacobian: the function must return a weft array or a list of weft arrays")
        return list(result) if isinstance(result, (list, tuple)) else [result]


def _problem(function, dim, inputs, outputs, device, max_blocks, block_dim) -> _Problem:
    from ..kernel import Kernel

    inputs = list(inputs or [])
    if isinstance(function, Kernel):
        if dim is None:
            raise Error(f"jacobian/gradcheck of kernel '{function.__name__}': dim= is required")
        outputs = list(outputs or [])
        names = function._param_names
        if len(inputs) + len(outputs) != len(names):
            raise Error(f"kernel '{function.__name__}' takes {len(names)} arguments ({', '.join(names)}), got "
                        f"{len(inputs)} inputs + {len(outputs)} outputs")
        return _Problem(function, True, dim, inputs, outputs, device, max_blocks, block_dim,
                        list(names[:len(inputs)]), list(names[len(inputs):]))
    if not callable(function):
        raise Error(f"jacobian/gradcheck expects a @wp.kernel or a Python function, got {type(function).__name__}")
    try:
        params = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        params = []
    in_names = [params[i] if i < len(params) else f"input_{i}" for i in range(len(inputs))]
    return _Problem(function, False, dim, inputs, [], device, max_blocks, block_dim, in_names, [])


def _pairs(problem: _Problem, outputs: list, mask) -> list[tuple[int, int]]:
    """The (input index, output index) pairs to evaluate: both float arrays with requires_grad, and in the mask."""
    ins = [i for i, a in enumerate(problem.inputs) if _is_float_array(a) and a.requires_grad]
    outs = [j for j, a in enumerate(outputs) if _is_float_array(a) and a.requires_grad]
    pairs = [(i, j) for i in ins for j in outs]
    if mask is None:
        return pairs
    out_names = problem.output_names or [f"output_{j}" for j in range(len(outputs))]
    wanted = set()
    for entry in mask:
        if not isinstance(entry, (tuple, list)) or len(entry) != 2:
            raise MaskError(f"input_output_mask entries are (input, output) pairs of names or indices, got {entry!r}")
        wanted.add((_index(entry[0], problem.input_names, "input"), _index(entry[1], out_names, "output")))
    return [p for p in pairs if p in wanted]


def _index(key, names: list[str], what: str) -> int:
    if isinstance(key, str):
        if key not in names:
            raise MaskError(f"input_output_mask: no {what} named '{key}' (have {', '.join(names) or 'none'})")
        return names.index(key)
    if not isinstance(key, (int, np.integer)) or not 0 <= key < len(names):
        raise MaskError(f"input_output_mask: {what} index {key!r} is out of range (0..{len(names) - 1})")
    return int(key)


class JacobianMatrix(np.ndarray):
    """A Jacobian block: a NumPy array that also answers ``.numpy()`` (Warp returns device arrays here, so Warp
    programs call ``.numpy()`` on it)."""

    def numpy(self) -> np.ndarray:
        return np.asarray(self)


def _matrices(jac: dict) -> dict:
    return {k: v.view(JacobianMatrix) for k, v in jac.items()}


def _limit(n: int, max_per_var: int) -> int:
    return n if max_per_var is None or max_per_var <= 0 else min(n, max_per_var)


# ---------------------------------------------------------------------------------------------- Jacobians
def jacobian(function, dim=None, inputs: Sequence | None = None, outputs: Sequence | None = None,
             input_output_mask: list | None = None, device=None, max_blocks: int = 0, block_dim: int | None = None,
             max_outputs_per_var: int = -1, plot_jacobians: bool = False, metadata=None,
             restore_inputs: bool = True) -> dict:
    """Autodiff Jacobians of a kernel launch or of a Python function that launches kernels.

    Args:
        function: a ``@wp.kernel`` (launched over ``dim`` with ``inputs + outputs``) or a Python function called
            as ``function(*inputs)`` and returning a weft array or a list of them.
        dim: launch grid (kernels only).
        inputs: the kernel's input arguments (they precede the outputs), or the function's arguments.
        outputs: the kernel's output arguments (kernels only).
        input_output_mask: ``[(input, output), ...]`` pairs (names or indices) to evaluate; all pairs if None.
        device, max_blocks, block_dim: passed to ``wp.launch``.
        max_outputs_per_var: evaluate only the first rows of each Jacobian (all if <= 0); other rows are NaN.
        plot_jacobians: show the Jacobians with ``jacobian_plot`` (Matplotlib); ``metadata``: a ``FunctionMetadata``
            naming the inputs and outputs for the plot (default: from the kernel or function).
        restore_inputs: give the array inputs back their values on return (also when it raises), so a function
            that updates an input in place leaves it as it was.

    Returns:
        ``{(input index, output index): np.ndarray of shape (output components, input components)}`` (a NumPy
        subclass that also has Warp's ``.numpy()``).
        Output arrays hold the result of one forward evaluation afterwards.
    """
    from .tape import LaunchRecord, Tape

    problem = _problem(function, dim, inputs, outputs, device, max_blocks, block_dim)
    if problem.is_kernel:
        _check_backward_enabled(function)
    with _restored(problem.inputs if restore_inputs else ()), _read_flags_kept([*problem.inputs, *problem.outputs]):
        tape = Tape()
        with tape:
            outs = problem.run(record=True)
        for rec in tape.launches:
            if isinstance(rec, LaunchRecord):
                _check_backward_enabled(rec.kernel)
        return _jacobian_rows(problem, tape, outs, input_output_mask, max_outputs_per_var, plot_jacobians,
                              metadata)


def _jacobian_rows(problem, tape, outs, input_output_mask, max_outputs_per_var, plot_jacobians, metadata) -> dict:
    pairs = _pairs(problem, outs, input_output_mask)
    jac = {(i, j): np.full((_n_components(outs[j]), _n_components(problem.inputs[i])), np.nan) for i, j in pairs}
    by_output: dict[int, list[int]] = {}
    for i, j in pairs:
        by_output.setdefault(j, []).append(i)
    tape.zero()
    for j, ins in by_output.items():
        out = outs[j]
        n = _n_components(out)
        for row in range(_limit(n, max_outputs_per_var)):
            seed = np.zeros(n)
            seed[row] = 1.0
            _set_values(out.grad, seed)
            tape.backward()
            for i in ins:
                jac[(i, j)][row, :] = _grad_values(problem.inputs[i])
            tape.zero()
    if plot_jacobians:
        _plot(jac, metadata, problem, outs)
    return _matrices(jac)


def _check_backward_enabled(kernel) -> None:
    if not kernel.enable_backward:
        raise BackwardDisabledError(f"Kernel must have backward pass enabled to compute Jacobians: kernel "
                                    f"'{kernel.__name__}' has enable_backward=False (its own option or its "
                                    "module's)")


def jacobian_fd(function, dim=None, inputs: Sequence | None = None, outputs: Sequence | None = None,
                input_output_mask: list | None = None, device=None, max_blocks: int = 0, block_dim: int | None = None,
                max_inputs_per_var: int = -1, eps: float = 1e-4, plot_jacobians: bool = False,
                metadata=None, restore_inputs: bool = True) -> dict:
    """Central-difference Jacobians ``(f(x + eps e_k) - f(x - eps e_k)) / (2 eps)``, one input component at a time.

    Same arguments and result as :func:`jacobian`, with ``max_inputs_per_var`` limiting the columns evaluated
    (others are NaN) and ``eps`` the step. The perturbed inputs are restored, and the outputs hold the unperturbed
    result, when it returns. With ``restore_inputs`` every evaluation starts from the array inputs' values at the
    call (a function updating an input in place sees the same values each time) and they are restored on return.
    """
    problem = _problem(function, dim, inputs, outputs, device, max_blocks, block_dim)
    with _restored(problem.inputs if restore_inputs else ()) as initial, \
            _read_flags_kept([*problem.inputs, *problem.outputs]):
        return _fd_columns(problem, input_output_mask, max_inputs_per_var, eps, plot_jacobians, metadata, initial)


def _fd_columns(problem, input_output_mask, max_inputs_per_var, eps, plot_jacobians, metadata, initial) -> dict:
    start = [(a, _values(a)) for a in problem.outputs if _is_float_array(a)]
    perturbed = {}

    def evaluate() -> list:
        for a, v in start:
            _set_values(a, v)
        for a, v in initial:
            _set_values(a, perturbed.get(id(a), v))
        with _no_tape():
            result = problem.run()
        return [_values(a) if _is_float_array(a) else None for a in result]

    with _no_tape():
        for a, v in start:
            _set_values(a, v)
        outs_arrays = problem.run()
    pairs = _pairs(problem, outs_arrays, input_output_mask)
    jac = {(i, j): np.full((_n_components(outs_arrays[j]), _n_components(problem.inputs[i])), np.nan)
           for i, j in pairs}
    by_input: dict[int, list[int]] = {}
    for i, j in pairs:
        by_input.setdefault(i, []).append(j)
    for i, outs in by_input.items():
        x = problem.inputs[i]
        x0 = next((np.array(v, dtype=np.float64).reshape(-1) for a, v in initial if a is x), None)
        x0 = _values(x) if x0 is None else x0
        for col in range(_limit(x0.size, max_inputs_per_var)):
            xp = x0.copy()
            xp[col] += eps
            _set_values(x, xp)
            perturbed[id(x)] = xp
            plus = evaluate()
            xp[col] = x0[col] - eps
            _set_values(x, xp)
            minus = evaluate()
            for j in outs:
                jac[(i, j)][:, col] = (plus[j] - minus[j]) / (2.0 * eps)
        perturbed.pop(id(x), None)
        _set_values(x, x0)
    evaluate()
    if plot_jacobians:
        _plot(jac, metadata, problem, outs_arrays)
    return _matrices(jac)


def _plot(jac: dict, metadata, problem, outs, title: str | None = None) -> None:
    from .jacobian_plot import function_metadata, jacobian_plot

    meta = metadata or function_metadata(problem, outs)
    jacobian_plot(jac, meta, title=None if title is None else f"{meta.key or 'unknown'} kernel Jacobian {title}")


# ---------------------------------------------------------------------------------------------- gradcheck
def gradcheck(function, dim=None, inputs: Sequence | None = None, outputs: Sequence | None = None, *,
              eps: float = 1e-4, atol: float = 1e-3, rtol: float = 1e-2, raise_exception: bool = True,
              input_output_mask: list | None = None, device=None, max_blocks: int = 0, block_dim: int | None = None,
              max_inputs_per_var: int = -1, max_outputs_per_var: int = -1, plot_relative_error: bool = False,
              plot_absolute_error: bool = False, show_summary: bool = True, restore_inputs: bool = True) -> bool:
    """Whether autodiff Jacobians match central differences: no NaN and ``|AD - FD| <= atol + rtol |FD|``.

    Arguments as for :func:`jacobian` / :func:`jacobian_fd`. Only the block of each Jacobian evaluated by both
    (``max_outputs_per_var`` rows x ``max_inputs_per_var`` columns) is compared.

    Returns:
        True if every compared entry passes.

    Raises:
        GradcheckError (a ValueError): when the check fails and ``raise_exception`` is set; the message names
            each failing input/output pair and its worst entry.
    """
    problem = _problem(function, dim, inputs, outputs, device, max_blocks, block_dim)
    start = [(a, _values(a)) for a in problem.outputs if _is_float_array(a)]
    ad = jacobian(function, dim, inputs, outputs, input_output_mask, device, max_blocks, block_dim,
                  max_outputs_per_var, restore_inputs=restore_inputs)
    for a, v in start:  # both Jacobians start from the same output state (kernels may accumulate into outputs)
        _set_values(a, v)
    fd = jacobian_fd(function, dim, inputs, outputs, input_output_mask, device, max_blocks, block_dim,
                     max_inputs_per_var, eps, restore_inputs=restore_inputs)
    report = _compare(ad, fd, problem, atol, rtol, max_inputs_per_var, max_outputs_per_var)
    if show_summary:
        print(_summary(report))
    if plot_relative_error or plot_absolute_error:
        outs = problem.outputs if problem.is_kernel else problem.run()
        absolute = {k: np.abs(ad[k] - fd[k]) for k in ad if k in fd}
        if plot_relative_error:
            _plot({k: v / np.maximum(np.abs(fd[k]), 1e-12) for k, v in absolute.items()}, None, problem, outs,
                  "relative error")
        if plot_absolute_error:
            _plot(absolute, None, problem, outs, "absolute error")
    failed = [r for r in report if not r.ok]
    if failed and raise_exception:
        raise GradcheckError("gradient check failed:\n" + _summary(failed))
    return not failed


def gradcheck_tape(tape, *, eps: float = 1e-4, atol: float = 1e-3, rtol: float = 1e-2,
                   raise_exception: bool = True, input_output_masks: dict | None = None,
                   blacklist_kernels: list | None = None, whitelist_kernels: list | None = None,
                   max_inputs_per_var: int = -1, max_outputs_per_var: int = -1, plot_relative_error: bool = False,
                   plot_absolute_error: bool = False, show_summary: bool = True, reverse_launches: bool = False,
                   skip_to_launch_index: int = 0) -> bool:
    """:func:`gradcheck` of every kernel launch recorded on ``tape`` (with the arguments it was launched with).

    ``input_output_masks`` maps kernel names to masks; ``blacklist_kernels`` / ``whitelist_kernels`` select
    kernels by name (or object). Copies and ``record_func`` entries are skipped. Launches are re-run, so arrays
    they write hold new values afterwards.
    """
    from .tape import LaunchRecord

    def named(k, names) -> bool:
        return any(k is n or k.__name__ == n for n in names)

    records = [r for r in tape.launches if isinstance(r, LaunchRecord)]
    order = list(enumerate(records))[skip_to_launch_index:]
    if reverse_launches:
        order.reverse()
    ok = True
    for _, rec in order:
        if not rec.kernel.enable_backward:  # no adjoint to check (its kernel or module option turned it off)
            continue
        if blacklist_kernels and named(rec.kernel, blacklist_kernels):
            continue
        if whitelist_kernels and not named(rec.kernel, whitelist_kernels):
            continue
        mask = (input_output_masks or {}).get(rec.kernel.__name__)
        ok &= gradcheck(rec.kernel, rec.dims, list(rec.args[:rec.n_inputs]), list(rec.args[rec.n_inputs:]),
                        eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception, input_output_mask=mask,
                        device=rec.device, block_dim=rec.block_dim, max_inputs_per_var=max_inputs_per_var,
                        max_outputs_per_var=max_outputs_per_var, plot_relative_error=plot_relative_error,
                        plot_absolute_error=plot_absolute_error, show_summary=show_summary)
    return ok


@dataclass
class _PairReport:
    name: str
    ok: bool
    max_abs: float
    max_rel: float
    worst: tuple
    ad: float
    fd: float
    has_nan: bool


def _compare(ad: dict, fd: dict, problem: _Problem, atol: float, rtol: float, max_in: int, max_out: int):
    report = []
    out_names = problem.output_names
    for (i, j), a in ad.items():
        f = fd[(i, j)]
        rows, cols = _limit(a.shape[0], max_out), _limit(a.shape[1], max_in)
        a_, f_ = a[:rows, :cols], f[:rows, :cols]
        out_name = out_names[j] if j < len(out_names) else f"output_{j}"
        name = f"d {out_name} / d {problem.input_names[i]}"
        if a_.size == 0:
            report.append(_PairReport(name, True, 0.0, 0.0, (), 0.0, 0.0, False))
            continue
        err = np.abs(a_ - f_)
        bound = atol + rtol * np.abs(f_)
        has_nan = bool(np.isnan(a_).any())
        excess = np.where(np.isnan(err), np.inf, err - bound)
        worst = np.unravel_index(int(np.argmax(excess)), excess.shape)
        rel = err / np.maximum(np.abs(f_), 1e-30)
        report.append(_PairReport(name, bool(not has_nan and (err <= bound).all()), float(np.nanmax(err)),
                                  float(np.nanmax(rel)), tuple(int(w) for w in worst), float(a_[worst]),
                                  float(f_[worst]), has_nan))
    return report


def _summary(report) -> str:
    lines = []
    for r in report:
        status = "ok" if r.ok else "FAILED"
        line = f"  {r.name}: {status} (max abs error {r.max_abs:.3g}, max rel error {r.max_rel:.3g})"
        if not r.ok:
            nan = ", autodiff has NaN" if r.has_nan else ""
            line += f"; worst at [row {r.worst[0]}, col {r.worst[1]}]: autodiff {r.ad:.6g} vs FD {r.fd:.6g}{nan}"
        lines.append(line)
    return "\n".join(lines) if lines else "  (no differentiable input/output pairs)"


__all__ = ["GradcheckError", "gradcheck", "gradcheck_tape", "jacobian", "jacobian_fd"]
