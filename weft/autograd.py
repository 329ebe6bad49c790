"""``wp.autograd``: gradient debugging tools with Warp's ``warp.autograd`` signatures.

``gradcheck``, ``jacobian``, ``jacobian_fd`` and ``gradcheck_tape`` live with the runtime (``weft.runtime.gradcheck``:
they launch kernels and run Tapes); Jacobians come back as NumPy arrays in dicts keyed by (input, output) index.
``jacobian_plot`` draws them with Matplotlib (``weft.runtime.jacobian_plot``).
"""

from .runtime.gradcheck import GradcheckError, gradcheck, gradcheck_tape, jacobian, jacobian_fd
from .runtime.jacobian_plot import jacobian_plot

__all__ = ["GradcheckError", "gradcheck", "gradcheck_tape", "jacobian", "jacobian_fd", "jacobian_plot"]
