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
#   kernels-fused/          with PREP_EPILOGUE=act:b32:res: the same candidates with that fused epilogue
# PREP_CAP=N caps the candidates per shape; PREP_VARIANT=depthwise (comma list) keeps only those variants.
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
tool=node_modules/.rocke-prep-tool   # here-only tools, kept out of the carried .device
rm -rf "$out/dist" "$out/build" "$tool" .device/prep-tool
mkdir -p "$out/dist" "$out/build/Release" "$tool"
bundle() { # entry outfile
  "$esbuild" "$1" --bundle --platform=node --format=esm --target=node20 --conditions=@rocke/source \
    --define:__PACKAGE_VERSION__='"0.0.0"' --external:*.node --log-level=warning --outfile="$2" \
    --banner:js="import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);"
}
bundle packages/pipeline/src/cli.ts "$out/dist/rocke.mjs"
bundle packages/pipeline/src/testing/selftest-main.ts "$tool/rocke-selftest.mjs"
cp "$addon" "$out/build/Release/"
cp packages/pipeline/device/cudnn_baseline.py "$out/dist/"
cp "$suite" "$out/public.json"
echo "prep: compiling the suite's candidates for sm_90 (cache: ${ROCKE_CACHE_DIR:-.rocke-cache})"
node "$out/dist/rocke.mjs" bench-prep --suite "$suite" --out "$out/kernels" --target sm_90 ${PREP_CAP:+--cap "$PREP_CAP"} ${PREP_VARIANT:+--variant "$PREP_VARIANT"}
# PREP_EPILOGUE=silu:b32:res (for bench-fused.sh): the same candidates compiled with that fused epilogue.
if [ -n "${PREP_EPILOGUE:-}" ]; then
  echo "prep: compiling the same candidates fused with $PREP_EPILOGUE into $out/kernels-fused"
  node "$out/dist/rocke.mjs" bench-prep --suite "$suite" --out "$out/kernels-fused" --target sm_90 --epilogue "$PREP_EPILOGUE" ${PREP_CAP:+--cap "$PREP_CAP"} ${PREP_VARIANT:+--variant "$PREP_VARIANT"}
  cp packages/pipeline/device/bench-fused.sh packages/pipeline/device/fused-compare.mjs "$out/dist/"
fi
# Self-checks of the bundle on this machine: the GPU code path over the real manifest on
# hip-runtime's fake binding (JavaScript kernels, shrunk shapes), then the bundled CLI, whose bench
# must find the addon and say clearly that there is no GPU here (exit 1) instead of crashing.
echo "prep: self-test of the bundled bench code on the fake binding"
node "$tool/rocke-selftest.mjs" "$out/kernels" 2
node "$out/dist/rocke.mjs" --version >/dev/null
set +e
node "$out/dist/rocke.mjs" bench --suite "$out/public.json" --cache-dir "$out/kernels" --verify 2>&1 | head -3
set -e
du -sh "$out"; du -sh .device
size=$(du -sm .device | cut -f1)
[ "$size" -lt 60 ] || { echo "prep: .device is ${size} MiB, over the 60 MiB carry budget" >&2; exit 1; }
echo "prep: done. carry: [\".device\"]   device command:"
echo "  xz -dc .device/node.xz > /tmp/node && chmod +x /tmp/node && export PATH=/tmp:\$PATH; bash packages/pipeline/device/bench.sh \$OUT"
