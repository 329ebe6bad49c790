"""weft ir."""
