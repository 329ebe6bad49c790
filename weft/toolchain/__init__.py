"""weft toolchain."""
