"""weft types."""
