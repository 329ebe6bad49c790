"""Op-table case of texture_sample (float32 textures; LINEAR filtering, WRAP addressing): the coordinate gradient
against central differences. The texture is captured by the kernel as a constant."""

# no `from __future__ import annotations`: kernel annotations are evaluated where defined
import numpy as np

import weft as wp

TEX = wp.Texture2D(np.random.default_rng(4).random((5, 6, 2)).astype(np.float32), address_mode=wp.TextureAddressMode.WRAP)


@wp.kernel
def k_texture_sample(u: wp.array(dtype=float), v: wp.array(dtype=float), out: wp.array(dtype=wp.vec2f)):
    i = wp.tid()
    out[i] = wp.texture_sample(TEX, wp.vec2f(u[i], v[i]), dtype=wp.vec2f)


def _away_from_centres(rng, n):
    """Coordinates whose texel-space offsets stay 0.1 away from texel centres (the kinks of linear filtering)."""
    def axis(size):
        cell = rng.integers(-2, size + 2, size=n)
        return (cell + 0.5 + rng.uniform(0.1, 0.9, size=n)) / size
    return [axis(6), axis(5)]


def add_entries(entry, case) -> None:
    entry("misc", "texture_sample", case("bilinear, wrapped, 2 channels", (float, float), wp.vec2f,
                                         _away_from_centres, kernel=k_texture_sample, eps=1e-3, rtol=2e-2,
                                         atol=2e-3, n=6))
