"""wp.map_cuda_device / wp.unmap_cuda_device (extra names of CUDA devices) and the device errors Warp programs catch
as RuntimeError."""

import pytest

import weft as wp


def test_unknown_aliases_raise_runtime_errors():
    with pytest.raises(RuntimeError, match="Invalid CUDA device alias 'imaginary_device:0'"):
        wp.unmap_cuda_device("imaginary_device:0")
    with pytest.raises(RuntimeError, match="cuda:7"):
        wp.get_device("cuda:7")
    if not wp.is_cuda_available():
        with wp.ScopedDevice("cpu"), pytest.raises(RuntimeError, match="Unable to determine CUDA context"):
            wp.map_cuda_device("my_gpu")


@pytest.mark.skipif(not wp.is_cuda_available(), reason="needs a CUDA device")
def test_alias_names_the_device_until_unmapped():
    dev = wp.get_device("cuda:0")
    assert wp.map_cuda_device("my_gpu", dev.context) is dev
    assert wp.get_device("my_gpu") is dev
    wp.unmap_cuda_device("my_gpu")
    with pytest.raises(RuntimeError):
        wp.get_device("my_gpu")
