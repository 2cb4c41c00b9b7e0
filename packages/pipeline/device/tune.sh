#!/usr/bin/env bash
# On the GPU machine (H200, CUDA driver, python3 + numpy; node on PATH), from the repo root, after
# packages/pipeline/device/prep.sh [SUITE.json] here (carry ".device"); for shapes the ranker was never
# fitted on, prep device/zoo-heldout.json (every 7th distinct zoo layer, no public-suite shape):
#   xz -dc .device/node.xz > /tmp/node && chmod +x /tmp/node && export PATH=/tmp:$PATH
#   bash packages/pipeline/device/tune.sh "$OUT"
# 1. rocke tune over the bundle's suite: every winner verified, recorded in kernels/records/;
#    OUT/tune-details.json holds every candidate's time (the ranker's evaluation input).
# 2. rocke plan --suite: every shape is now chosen by its record (chosenBy), in one process.
# 3. rocke run with a record hit on three shapes of the suite: y checked against the CPU reference
#    (rocke run --device cpu), and the host time per run() call over 2000 calls (no timing launches:
#    openConv never creates events or graphs).
# Then here: ROCKE_RANKER_EVAL=OUT/tune-details.json npx vitest run src/ranker/fit.test.ts (in
# packages/conv-direct) prints the committed ranker's pick against the tuned best per shape, marking
# the shapes its fit never saw.
set -uo pipefail
out=${1:?usage: tune.sh OUT_DIR}
b=.device/bundle
rocke="node $b/dist/rocke.mjs"
mkdir -p "$out"
[ -f "$b/dist/rocke.mjs" ] || { echo "tune.sh: $b/dist/rocke.mjs is missing: run prep.sh here and carry .device" >&2; exit 2; }
export ROCKE_BENCH_OUT="$out" ROCKE_BENCH_BUDGET_S=${ROCKE_BENCH_BUDGET_S:-15} ROCKE_BENCH_MAX_CANDIDATES=${ROCKE_BENCH_MAX_CANDIDATES:-40}
nvidia-smi --query-gpu=name,driver_version --format=csv 2>/dev/null || true
start=$(date +%s)
$rocke tune --suite "$b/public.json" --cache-dir "$b/kernels" --target sm_90 2> >(tee "$out/tune.log" >&2) | tee "$out/tune.txt"
echo "tune.sh: tune exited ${PIPESTATUS[0]} after $(( $(date +%s) - start )) s"
cp -r "$b/kernels/records" "$out/records"
$rocke plan --suite "$b/public.json" --cache-dir "$b/kernels" --target sm_90 --json > "$out/plan.json"
$rocke plan --suite "$b/public.json" --cache-dir "$b/kernels" --target sm_90 | tee "$out/plan.txt"
# Three shapes of the suite (the first small-map, grouped and dense one) with random bf16 operands.
python3 - "$b/public.json" "$out" <<'PY' > "$out/run-shapes.txt"
import json, sys, numpy as np
suite, out = sys.argv[1], sys.argv[2]
seen = set()
for s in json.load(open(suite))['shapes']:
    cls = s.get('cls')
    if cls in seen or s.get('dtype', 'bf16') != 'bf16' or cls not in ('small-map', 'grouped', 'dense'):
        continue
    seen.add(cls)
    g = s.get('groups', 1)
    rng = np.random.default_rng(1)
    f32 = lambda shape: (rng.standard_normal(shape, dtype=np.float32) * 0.5)
    bits = lambda a: (a.view(np.uint32) >> 16).astype(np.uint16)  # truncation to bf16 bits
    np.save(f"{out}/{s['name']}_x.npy", bits(f32((s['N'], s['H'], s['W'], s['C']))))
    np.save(f"{out}/{s['name']}_w.npy", bits(f32((s['K'], s['R'], s['S'], s['C'] // g))))
    print(s['name'], s.get('stride', 1), s.get('pad', 0), g)
PY
while read -r name stride pad groups; do
  args=(--x "$out/${name}_x.npy" --w "$out/${name}_w.npy" --stride "$stride" --pad "$pad" --groups "$groups")
  $rocke run "${args[@]}" --out "$out/${name}_y.npy" --cache-dir "$b/kernels" --target sm_90 --repeat 2000 2>&1 | tee "$out/${name}_run.log"
  $rocke run "${args[@]}" --out "$out/${name}_ref.npy" --device cpu >/dev/null
  python3 -c "
import numpy as np, sys
f = lambda p: (np.load(p).astype(np.uint32) << 16).view(np.float32)
y, r = f('$out/${name}_y.npy'), f('$out/${name}_ref.npy')
err = np.abs(y - r).max(); scale = np.abs(r).max()
print('$name: max |y - ref| =', err, 'of max |ref|', scale, 'PASS' if err <= 0.02 * scale + 1e-2 else 'FAIL')" | tee -a "$out/run-check.txt"
done < "$out/run-shapes.txt"
exit 0
