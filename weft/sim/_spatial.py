"""Small kernel helpers shared by weft.sim modules."""

import weft as wp


@wp.func
def spatial(top: wp.vec3, bottom: wp.vec3):
    """Spatial vector (top = angular, bottom = linear) from two 3-vectors."""
    return wp.spatial_vector(top[0], top[1], top[2], bottom[0], bottom[1], bottom[2])
