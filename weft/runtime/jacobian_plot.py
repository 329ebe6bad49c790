"""``wp.autograd.jacobian_plot``: the Jacobians of ``jacobian`` / ``jacobian_fd`` (or gradcheck's error matrices)
as one Matplotlib figure (Matplotlib is optional: needed only here).

The figure is a grid with one row per output and one column per input that appears in the Jacobians (sorted by
index); each cell shows that block (output components x input components) as an image, labelled with the input
(x) and output (y) names, and cells of pairs without a Jacobian are blank. Columns and rows are as wide and tall as
their component counts. One colour scale spans all blocks (with one colorbar) unless ``scale_colors_per_submatrix``
(then each block has its own); ``log_scale`` uses a symmetric log scale.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..types.dtypes import np_layout
from ..types.mapping import to_ir


@dataclass
class FunctionMetadata:
    """What ``jacobian_plot`` needs to know about a kernel or function: its name (``key``), the labels of its
    inputs and outputs, and their dtypes (which give the component count per element). Strides are accepted for
    Warp compatibility."""

    key: str | None = None
    input_labels: list = field(default_factory=list)
    output_labels: list = field(default_factory=list)
    input_strides: list = field(default_factory=list)
    output_strides: list = field(default_factory=list)
    input_dtypes: list = field(default_factory=list)
    output_dtypes: list = field(default_factory=list)

    @staticmethod
    def from_kernel(kernel, inputs, outputs=None) -> FunctionMetadata:
        names = list(kernel._param_names)
        inputs = list(inputs or [])
        outs = list(outputs or [])
        n_in = len(inputs)
        return FunctionMetadata(key=kernel.__name__, input_labels=names[:n_in], output_labels=names[n_in:],
                                input_strides=[None] * n_in, output_strides=[None] * (len(names) - n_in),
                                input_dtypes=[getattr(a, "dtype", None) for a in inputs],
                                output_dtypes=[getattr(a, "dtype", None) for a in outs]
                                + [None] * (len(names) - n_in - len(outs)))


def _components(dtype, what: str) -> int:
    if dtype is None:
        raise ValueError(f"{what}: missing array dtype")
    try:
        _base, trailing = np_layout(to_ir(dtype))
        return int(np.prod(trailing)) if trailing else 1
    except Exception as exc:
        raise ValueError(f"{what}: cannot tell the component count of dtype {dtype!r}") from exc


def _label(labels: list, index: int, what: str) -> str:
    if index >= len(labels):
        raise ValueError(f"Jacobian {what} index {index} has no entry in the metadata")
    if labels[index] is None:
        raise ValueError(f"Jacobian {what} index {index}: missing label")
    return str(labels[index])


def jacobian_plot(jacobians: dict, kernel, inputs=None, show_plot: bool = True, show_colorbar: bool = True,
                  scale_colors_per_submatrix: bool = False, title: str | None = None, colormap: str = "coolwarm",
                  log_scale: bool = False, outputs=None):
    """Plot ``{(input index, output index): matrix}`` Jacobians; returns the Matplotlib figure (None when empty).

    Args:
        jacobians: from ``jacobian`` / ``jacobian_fd`` (NumPy or weft 2-D arrays).
        kernel: the ``@wp.kernel`` (then ``inputs`` is required) or a ``FunctionMetadata``.
        show_plot: call ``plt.show()``.
        show_colorbar, scale_colors_per_submatrix, colormap, log_scale: the colour mapping.
        title: the figure title (default ``"<kernel name> kernel Jacobian"``).
    """
    from ..kernel import Kernel

    if isinstance(kernel, Kernel):
        if inputs is None:
            raise ValueError("inputs must be provided when kernel is a kernel")
        meta = FunctionMetadata.from_kernel(kernel, inputs, outputs)
    elif isinstance(kernel, FunctionMetadata):
        meta = kernel
    else:
        raise ValueError("kernel must be a kernel or a FunctionMetadata")  # noqa: TRY004 - as Warp raises
    mats = {k: (v.numpy() if hasattr(v, "numpy") else np.asarray(v)) for k, v in jacobians.items()}
    ins = sorted({i for i, _ in mats})
    outs = sorted({o for _, o in mats})
    if not ins or not outs:
        return None
    in_labels = [_label(meta.input_labels, i, "input") for i in ins]
    out_labels = [_label(meta.output_labels, o, "output") for o in outs]
    widths = [mats[next(k for k in mats if k[0] == i)].shape[1] for i in ins]
    heights = [mats[next(k for k in mats if k[1] == o)].shape[0] for o in outs]
    for i in ins:
        if i < len(meta.input_dtypes):
            _components(meta.input_dtypes[i], f"Jacobian input index {i}")
    import matplotlib.pyplot as plt
    from matplotlib import colors

    values = np.concatenate([m.reshape(-1) for m in mats.values()]) if mats else np.zeros(1)
    lim = float(np.nanmax(np.abs(values))) if values.size else 1.0
    lim = lim if lim > 0.0 else 1.0

    def norm(m):
        v = float(np.nanmax(np.abs(m))) if scale_colors_per_submatrix and m.size else lim
        v = v if v > 0.0 else 1.0
        return colors.SymLogNorm(linthresh=1e-6 * v, vmin=-v, vmax=v) if log_scale else colors.Normalize(-v, v)

    fig, axes = plt.subplots(len(outs), len(ins), squeeze=False, layout="constrained",
                             gridspec_kw={"width_ratios": widths, "height_ratios": heights})
    image = None
    for r, o in enumerate(outs):
        for c, i in enumerate(ins):
            ax = axes[r, c]
            m = mats.get((i, o))
            if m is None:
                ax.axis("off")
                continue
            image = ax.imshow(m, cmap=colormap, norm=norm(m), interpolation="nearest", aspect="auto")
            ax.set_xlabel(in_labels[c])
            ax.set_ylabel(out_labels[r])
            if show_colorbar and scale_colors_per_submatrix:
                fig.colorbar(image, ax=ax)
    if show_colorbar and not scale_colors_per_submatrix and image is not None:
        fig.colorbar(image, ax=axes.ravel().tolist())
    fig.suptitle(title if title is not None else f"{meta.key or 'unknown'} kernel Jacobian")
    if show_plot:
        plt.show()
    return fig


def function_metadata(problem, outs) -> FunctionMetadata:
    """Metadata of a gradcheck problem (kernel or Python function) with its output arrays, for plotting."""
    key = getattr(problem.function, "__name__", None)
    out_labels = problem.output_names or [f"output_{j}" for j in range(len(outs))]
    return FunctionMetadata(key=key, input_labels=list(problem.input_names), output_labels=list(out_labels),
                            input_strides=[None] * len(problem.inputs), output_strides=[None] * len(out_labels),
                            input_dtypes=[getattr(a, "dtype", None) for a in problem.inputs],
                            output_dtypes=[getattr(a, "dtype", None) for a in outs])

