"""weft autodiff: the adjoint transform, the Tape, and (as ``wp.autograd``) gradient debugging tools.

``wp.autograd.gradcheck``, ``jacobian``, ``jacobian_fd`` and ``gradcheck_tape`` follow Warp's
``warp.autograd`` signatures; Jacobians come back as NumPy arrays in dicts keyed by (input, output) index.
"""

from .gradcheck import GradcheckError, gradcheck, gradcheck_tape, jacobian, jacobian_fd

__all__ = ["GradcheckError", "gradcheck", "gradcheck_tape", "jacobian", "jacobian_fd"]
