"""``wp.autograd``: gradient debugging tools with Warp's ``warp.autograd`` signatures.

``gradcheck``, ``jacobian``, ``jacobian_fd`` and ``gradcheck_tape`` live with the runtime (``weft.runtime.gradcheck``:
they launch kernels and run Tapes); Jacobians come back as NumPy arrays in dicts keyed by (input, output) index.
"""

from .runtime.gradcheck import GradcheckError, gradcheck, gradcheck_tape, jacobian, jacobian_fd

__all__ = ["GradcheckError", "gradcheck", "gradcheck_tape", "jacobian", "jacobian_fd"]
