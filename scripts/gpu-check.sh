#!/usr/bin/env bash
# The CUDA backend checked on a machine with a GPU, in one run bounded to 8 minutes: versions and
# the GPU, every suite through `uir test --backend cuda`, the backend's GPU tests, and the
# benchmarks, each step under its own timeout; logs and results.json in .gpu-check/ (or --out).
# scripts/gpu_check.py says what each step runs and what the JSON holds.
#
#   scripts/gpu-check.sh [--out DIR]     on a GPU
#   scripts/gpu-check.sh --dry-run       the same steps through cuda-emu (the CPU), small sizes
#   options: --bundle DIR, --suite PATH (repeatable), --tests PATH (repeatable)
#
# Where uv is installed (a development machine) the steps run in the project's environment.
# Where it is not (the GPU machine: Python 3.12 with numpy, pytest and pluggy, no network), the
# packages come from the bundle that scripts/gpu-prepare.sh made here, carried as .gpu-bundle/
# (or --bundle DIR), and python3 runs them ($PYTHON to choose another).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ " $* " == *" --bundle "* ]]; then
    exec "${PYTHON:-python3}" scripts/gpu_check.py "$@"
elif command -v uv >/dev/null 2>&1; then
    exec uv run --frozen python scripts/gpu_check.py "$@"
else
    exec "${PYTHON:-python3}" scripts/gpu_check.py --bundle .gpu-bundle "$@"
fi
