#!/usr/bin/env bash
# GPU checks for weft (issue 5): on a machine with an NVIDIA GPU and driver, in under 10 minutes,
#   1. installs the cuda and test extras (cuda-bindings, NVRTC from pip: no CUDA toolkit needed),
#   2. runs the CUDA runtime tests, the tile tests (cooperative blocks), then the whole test suite with
#      cuda:0 as the default device,
#   3. runs benchmarks/bench_gpu.py (weft vs warp-lang when installed) and prints its table.
#
# Usage: tests/gpu/run_gpu_checks.sh [--dry-run] [--no-install] [--quick]
#   --dry-run     print the steps instead of running them (works anywhere)
#   --no-install  skip pip install (the environment is ready)
#   --quick       small benchmark sizes and a time-boxed suite (smoke run)
# Environment: WEFT_TEST_DEVICE (default cuda:0), SUITE_TIMEOUT / BENCH_TIMEOUT (seconds), PYTHON (default python3).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "${here}/../.." && pwd)"
python="${PYTHON:-python3}"
device="${WEFT_TEST_DEVICE:-cuda:0}"
dry_run=0
install=1
quick=0
for arg in "$@"; do
    case "${arg}" in
        --dry-run) dry_run=1 ;;
        --no-install) install=0 ;;
        --quick) quick=1 ;;
        -h | --help)
            sed -n '2,12p' "${BASH_SOURCE[0]}"
            exit 0
            ;;
        *)
            echo "unknown option: ${arg}" >&2
            exit 2
            ;;
    esac
done
suite_timeout="${SUITE_TIMEOUT:-330}"
bench_timeout="${BENCH_TIMEOUT:-180}"
if [[ "${quick}" == 1 ]]; then
    suite_timeout="${SUITE_TIMEOUT:-120}"
    bench_timeout="${BENCH_TIMEOUT:-90}"
fi

step() {
    echo
    echo "==> $*"
}

run() {
    if [[ "${dry_run}" == 1 ]]; then
        printf '[dry-run]'
        printf ' %q' "$@"
        printf '\n'
        return 0
    fi
    "$@"
}

cd "${root}"
start=${SECONDS}
status=0

if [[ "${install}" == 1 ]]; then
    step "install weft with the cuda and test extras"
    run "${python}" -m pip install --quiet -e ".[cuda,test]"
fi

step "GPU and driver"
if [[ "${dry_run}" == 0 ]] && command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
fi
run "${python}" -c "import weft as wp; from weft.cuda import driver; from weft.toolchain import nvrtc; \
print('devices:', [f'{d} {d.name} sm_{d.arch}' for d in wp.get_devices()]); \
print('driver CUDA version:', driver.driver_version(), driver.unavailable_reason); \
print('NVRTC:', nvrtc.version()); wp.get_device('${device}')"

export WEFT_TEST_DEVICE="${device}"
export WEFT_TEST_REUSE_CACHE="${WEFT_TEST_REUSE_CACHE:-1}"  # warm cache across the steps below
export PYTHONPATH="${here}${PYTHONPATH:+:${PYTHONPATH}}"    # for -p device_plugin

step "CUDA runtime tests on ${device}"
run timeout "${suite_timeout}" "${python}" -m pytest -q -p device_plugin tests/cuda -x || status=1

step "tile kernels (cooperative CUDA blocks) on ${device}"
run env WEFT_NVRTC_CHECK=0 timeout "${suite_timeout}" "${python}" -m pytest -q -p device_plugin tests/tiles \
    tests/cuda/test_cuda_tiles.py::test_cooperative_tiles_on_gpu_match_cpu -n "${PYTEST_WORKERS:-4}" || status=1

step "whole test suite with ${device} as the default device (time box ${suite_timeout}s)"
# The NVRTC compile check already ran in CI; skip it here to leave the time to the GPU.
run env WEFT_NVRTC_CHECK=0 timeout "${suite_timeout}" "${python}" -m pytest -q -p device_plugin tests \
    --ignore=tests/cuda -n "${PYTEST_WORKERS:-4}" || status=1

step "GPU benchmarks (weft vs warp when installed)"
bench_args=(--device "${device}")
if [[ "${quick}" == 1 ]]; then
    bench_args+=(--quick)
fi
run timeout "${bench_timeout}" "${python}" benchmarks/bench_gpu.py "${bench_args[@]}" || status=1

step "done in $((SECONDS - start)) s (status ${status})"
exit "${status}"
