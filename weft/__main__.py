"""``python -m weft``: print diagnostics (version, compiler, OpenMP, SIMD, cache, CUDA); see weft/diagnostics.py."""

from weft.diagnostics import main

raise SystemExit(main())
