"""``wp.print(value)`` in kernels (Warp's spelling of ``print``) and on the host."""

import weft as wp


@wp.kernel
def _printing(x: float, n: wp.int8, flag: wp.bool):
    wp.print(x)
    wp.print("a string")
    wp.print(n)
    wp.print(flag)
    wp.print(wp.vec2(0.5, 2.0))


def test_wp_print_in_kernel_and_on_host(capfd):
    wp.launch(_printing, dim=1, inputs=[1.0, wp.int8(-1), True])
    wp.synchronize()
    wp.print(3)
    out = capfd.readouterr().out
    assert out == "1\na string\n-1\nTrue\n0.5 2 \n3\n"  # Warp's vector form: each component and a space

