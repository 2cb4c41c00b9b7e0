#!/usr/bin/env bash
# H200 check + benchmark of the split-reduce kernel. Run from the repo root on the GPU machine:
#   bash packages/split-reduce/device/run.sh
# Needs python3 with PyTorch (CUDA) and libcuda.so.1; no LLVM, node or npm: the sm_90 PTX and the
# launch plans are checked in next to this script (regenerate with `npm run goldens:update` in
# packages/split-reduce on a machine with LLVM 22).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
exec python3 "$here/bench.py"
