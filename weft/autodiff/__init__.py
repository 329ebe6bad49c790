"""weft autodiff."""
