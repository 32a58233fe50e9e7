#!/usr/bin/env bash
# The CUDA backend on a machine with a GPU, in one go (about five minutes on an H200):
#   1. the backend is available (a driver, a GPU, NVRTC);
#   2. every suite (suites/week*) through `uir test --backend cuda`: bit-exact against each
#      test's expectations;
#   3. the backend's own tests, the GPU ones included;
#   4. benchmarks/cuda_bench.py: a*b+c, a sum and a matmul, with their share of the H200's peak.
#
#   scripts/gpu-check.sh             on a GPU
#   scripts/gpu-check.sh --dry-run   the same steps through cuda-emu (CPU), small benchmark sizes
#
# The tests run this installation (trusted: no sandbox) without a memory limit (a CUDA context
# reserves far more address space than it uses), on a GPU each in a fresh Python (a CUDA context
# does not survive a fork; cuda-emu forks a preloaded Python as usual).
set -euo pipefail

backend=cuda
bench_size=()
fresh=(--no-fork-server)
case "${1:-}" in
    --dry-run)
        backend=cuda-emu
        bench_size=(--small)
        fresh=()
        ;;
    "") ;;
    *)
        echo "usage: $0 [--dry-run]" >&2
        exit 1
        ;;
esac

cd "$(dirname "$0")/.."

step() {
    printf '\n== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"
}

step "backend $backend"
uv run uir plugins | grep -E "^  $backend " | tee /dev/stderr | grep -q " available;"
if [[ $backend == cuda ]]; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
fi

step "suites through --backend $backend"
mapfile -t suites < <(find suites -mindepth 1 -maxdepth 1 -type d -name 'week*' | sort)
uv run uir test "${suites[@]}" --backend "$backend" "${fresh[@]}" --memory-limit 0 --timeout 60

step "uir-backend-cuda tests"
uv run pytest packages/uir-backend-cuda -p no:cacheprovider -rs

step "benchmark"
uv run python benchmarks/cuda_bench.py --backend "$backend" "${bench_size[@]}"

step "done"
