#!/usr/bin/env bash
# Rebuilds the committed kernels.ptx / kernels.cubin from kernels.ll (LLVM 22 + ptxas), here,
# without a GPU. The smoke test loads the PTX (driver JIT) and the cubin.
set -euo pipefail
cd "$(dirname "$0")"
LLC=${LLC:-llc-22}
$LLC -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90 -mattr=+ptx80 -O3 kernels.ll -o kernels.ptx
ptxas -arch=sm_90 -v kernels.ptx -o kernels.cubin
