#!/usr/bin/env bash
# On the GPU machine (H200, CUDA driver, python3 + PyTorch; node on PATH, no npm), from the repo root:
#   xz -dc .device/node.xz > /tmp/node && chmod +x /tmp/node && export PATH=/tmp:$PATH
#   bash packages/pipeline/device/bench.sh "$OUT"
# Needs .device/bundle from packages/pipeline/device/prep.sh (carry ".device").
# Times every shape of the suite (each in its own process, capped per shape), verifies against
# @rocke/reference, runs the cuDNN baseline in the same command, and writes into OUT:
#   bench.log (progress + the per-shape table), rows.json, report.html, bench-details.json, cudnn.json,
#   roofline.txt (per shape: ratio vs cuDNN and multiple of the roofline; class geomeans)
set -uo pipefail
out=${1:?usage: bench.sh OUT_DIR}
b=.device/bundle
mkdir -p "$out"
[ -f "$b/dist/rocke.mjs" ] || { echo "bench.sh: $b/dist/rocke.mjs is missing: run prep.sh here and carry .device" >&2; exit 2; }
export PYTHONUNBUFFERED=1 ROCKE_BENCH_OUT="$out"
export ROCKE_BENCH_BUDGET_S=${ROCKE_BENCH_BUDGET_S:-15} ROCKE_BENCH_MAX_CANDIDATES=${ROCKE_BENCH_MAX_CANDIDATES:-40}
node --version
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>/dev/null || true
start=$(date +%s)
node "$b/dist/rocke.mjs" bench --suite "$b/public.json" --cache-dir "$b/kernels" --target sm_90 \
  --verify --vs-cudnn --json --report "$out/report.html" >"$out/rows.json" 2> >(tee "$out/bench.log" >&2)
rc=$?
sleep 1
node packages/pipeline/device/roofline.mjs "$out/rows.json" "$b/public.json" | tee "$out/roofline.txt"
echo "bench.sh: rocke bench exited $rc after $(( $(date +%s) - start )) s (1 = some shape or verification failed; see the table above)"
exit 0
