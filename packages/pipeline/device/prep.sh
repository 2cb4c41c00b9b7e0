#!/usr/bin/env bash
# Run HERE (the machine with LLVM 22 and ptxas), from the repository root:
#   bash packages/pipeline/device/prep.sh [SUITE.json]
# Builds .device/bundle/, everything the GPU machine needs besides node (.device/node.xz):
#   dist/rocke.mjs          the whole `rocke` CLI bundled from src by esbuild (all @rocke/* packages,
#                           zod, msgpackr inlined: no node_modules on the device)
#   dist/cudnn_baseline.py  the cuDNN baseline (found beside the CLI)
#   build/Release/rocke_hip_runtime.node   the hip-runtime addon, where the bundled loader looks
#   kernels/                bench-manifest.json + blobs/ (cubins, deduplicated by SHA-256)
#   public.json             the suite
# Then carry ".device" and run packages/pipeline/device/bench.sh on the GPU machine.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
suite=${1:-packages/pipeline/device/public.json}
out=.device/bundle
addon=packages/hip-runtime/build/Release/rocke_hip_runtime.node
esbuild=node_modules/.bin/esbuild
[ -s .device/node.xz ] || { echo "prep: .device/node.xz is missing: run ../shared/tools/device-node.sh first" >&2; exit 1; }
[ -f "$addon" ] || { echo "prep: $addon is missing: run npm install (node-gyp builds it)" >&2; exit 1; }
rm -rf "$out/dist" "$out/build" .device/prep-tool
mkdir -p "$out/dist" "$out/build/Release" .device/prep-tool
bundle() { # entry outfile
  "$esbuild" "$1" --bundle --platform=node --format=esm --target=node20 --conditions=@rocke/source \
    --define:__PACKAGE_VERSION__='"0.0.0"' --external:*.node --log-level=warning --outfile="$2" \
    --banner:js="import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);"
}
bundle packages/pipeline/src/cli.ts "$out/dist/rocke.mjs"
bundle packages/pipeline/src/gpu/prep-main.ts .device/prep-tool/rocke-bench-prep.mjs
cp "$addon" "$out/build/Release/"
cp packages/pipeline/device/cudnn_baseline.py "$out/dist/"
cp "$suite" "$out/public.json"
echo "prep: compiling the suite's candidates for sm_90 (cache: ${ROCKE_CACHE_DIR:-.rocke-cache})"
node .device/prep-tool/rocke-bench-prep.mjs --suite "$suite" --out "$out/kernels" --target sm_90 ${PREP_CAP:+--cap "$PREP_CAP"}
# Self-check of the bundle on this machine: the CLI starts, reads the manifest, and bench says
# clearly that there is no GPU here (exit 1) instead of crashing.
node "$out/dist/rocke.mjs" --version >/dev/null
set +e
node "$out/dist/rocke.mjs" bench --suite "$out/public.json" --cache-dir "$out/kernels" --verify 2>&1 | head -3
set -e
du -sh "$out" .device
size=$(du -sm .device | cut -f1)
[ "$size" -lt 60 ] || { echo "prep: .device is ${size} MiB, over the 60 MiB carry budget" >&2; exit 1; }
echo "prep: done. carry: [\".device\"]   device command:"
echo "  xz -dc .device/node.xz > /tmp/node && chmod +x /tmp/node && export PATH=/tmp:\$PATH; bash packages/pipeline/device/bench.sh \$OUT"
