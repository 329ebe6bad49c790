"""weft frontend."""
