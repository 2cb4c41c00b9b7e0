#!/usr/bin/env bash
# Builds and runs the TMA + wgmma direct-halo 3x3 conv probe (d_64_c640) on an sm_90 GPU: every config
# in its own process (a hung pipeline traps instead of taking the others down), one summary line each.
#   bash packages/ir/device/probes/tma-conv/run.sh [--iters N] [--plain]
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cuda="${CUDA_HOME:-/usr/local/cuda}"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT

# -gencode rather than -arch=sm_90a: nvcc 13's -arch=sm_90a also embeds compute_90 PTX, for which the
# kernel compiles to a stub (wgmma and setmaxnreg need sm_90a). Either works on an H100/H200.
"$cuda/bin/nvcc" --version | tail -n 2
"$cuda/bin/nvcc" -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Xptxas -v "$here/tma_conv.cu" \
  -o "$build/tma_conv" -L"$cuda/lib64/stubs" -lcuda 2> "$build/ptxas.txt" || { cat "$build/ptxas.txt"; exit 1; }
grep -E "spill|Potential Performance Loss" "$build/ptxas.txt" | sort | uniq -c
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader 2> /dev/null || true

summary=()
for c in $("$build/tma_conv" --list | awk '{print $1}'); do
  timeout 180 "$build/tma_conv" --config "$c" "$@" > "$build/$c.log" 2>&1
  rc=$?
  grep -v "^RESULT" "$build/$c.log"
  line="$(grep "^RESULT" "$build/$c.log")" ||
    line="RESULT $c FAIL (exit $rc, no result: launch error or mbarrier watchdog trap = pipeline hang; log above)"
  summary+=("$line")
done
echo "==== summary (d_64_c640, 120.8 GFLOP; cuDNN 177-195 us = 620-680 TF/s) ===="
printf '%s\n' "${summary[@]}"
