"""weft backend."""
