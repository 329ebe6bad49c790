"""Tape hooks used by launches and copies; the Tape itself lives in ``weft.autodiff.tape``."""

from __future__ import annotations

import contextvars

active_tape: contextvars.ContextVar = contextvars.ContextVar("weft_tape", default=None)


def record_copy(dest, src, dest_offset, src_offset, count) -> None:
    tape = active_tape.get()
    if tape is not None:
        tape._record_copy(dest, src, dest_offset, src_offset, count)
