"""weft runtime."""
