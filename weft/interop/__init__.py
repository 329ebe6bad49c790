"""weft interop."""
