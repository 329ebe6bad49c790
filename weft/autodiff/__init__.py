"""weft autodiff: IR -> IR transforms only (``reverse``: the adjoint program, ``jumps``, ``prune``, ``custom``
gradients, ``value_reads``). The Tape, ``wp.checkpoint`` and the gradient checks run kernels, so they live with the
runtime (``weft.runtime.tape``, ``checkpoint``, ``gradcheck``); ``wp.autograd`` is ``weft.autograd``."""
