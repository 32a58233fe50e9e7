#!/usr/bin/env bash
# Prepares here, with a network, what scripts/gpu-check.sh needs on a GPU machine without one:
# the wheels of cuda-bindings, cuda-pathfinder, NVRTC (nvidia-cuda-nvrtc-cu12) and hypothesis for
# CPython 3.12 at the versions uv.lock pins, unpacked, pruned and packed with xz into
# .gpu-bundle/uir-gpu-py312.tar.xz with its manifest.json (about 40 MiB: carry .gpu-bundle/).
# The downloads stay in .gpu-downloads/ for the next time. scripts/gpu_bundle.py says more.
#
#   scripts/gpu-prepare.sh [--out DIR] [--downloads DIR]
#
# Needs a python3 (3.11 or later) with pip; $PYTHON to choose another.
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" scripts/gpu_bundle.py prepare "$@"
