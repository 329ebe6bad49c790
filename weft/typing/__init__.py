"""weft typing."""
