#!/usr/bin/env bash
# The fused-epilogue comparison, on the GPU machine (H200), from the repo root, after
#   PREP_EPILOGUE=silu:b32:res bash packages/pipeline/device/prep.sh     (here; carry ".device")
# then:
#   xz -dc .device/node.xz > /tmp/node && chmod +x /tmp/node && export PATH=/tmp:$PATH
#   bash packages/pipeline/device/bench-fused.sh "$OUT"
# Times the suite three ways in one command: our bare conv (kernels/), our conv with the fused
# epilogue (kernels-fused/, every candidate verified against @rocke/reference's fp64 epilogue), and
# cuDNN's conv followed by PyTorch's own bias add, residual add and activation (eager,
# channels_last). Writes rows-bare.json, rows-fused.json, the logs, and fused-compare.txt:
# per shape fused/bare (goal <= 1.05) and (cuDNN + ops)/fused (goal > 1), with class geomeans.
set -uo pipefail
out=${1:?usage: bench-fused.sh OUT_DIR}
b=.device/bundle
mkdir -p "$out/bare" "$out/fused"
[ -f "$b/kernels-fused/bench-manifest.json" ] || { echo "bench-fused.sh: $b/kernels-fused is missing: run PREP_EPILOGUE=act:b32:res prep.sh here and carry .device" >&2; exit 2; }
export PYTHONUNBUFFERED=1
export ROCKE_BENCH_BUDGET_S=${ROCKE_BENCH_BUDGET_S:-15} ROCKE_BENCH_MAX_CANDIDATES=${ROCKE_BENCH_MAX_CANDIDATES:-40}
node --version
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>/dev/null || true
start=$(date +%s)
ROCKE_BENCH_OUT="$out/bare" node "$b/dist/rocke.mjs" bench --suite "$b/public.json" --cache-dir "$b/kernels" --target sm_90 \
  --verify --json >"$out/rows-bare.json" 2> >(tee "$out/bench-bare.log" >&2)
echo "bench-fused.sh: bare bench exited $? after $(( $(date +%s) - start )) s"
ROCKE_BENCH_OUT="$out/fused" node "$b/dist/rocke.mjs" bench --suite "$b/public.json" --cache-dir "$b/kernels-fused" --target sm_90 \
  --verify --vs-cudnn --json >"$out/rows-fused.json" 2> >(tee "$out/bench-fused.log" >&2)
echo "bench-fused.sh: fused bench exited $? after $(( $(date +%s) - start )) s"
sleep 1
node "$b/dist/fused-compare.mjs" "$out/rows-bare.json" "$out/rows-fused.json" | tee "$out/fused-compare.txt"
exit 0
