#!/usr/bin/env bash
# Brings a fresh machine to a working state; cheap when nothing is missing.
#   npm dependencies (npm ci), Debian llvm-22 + lld-22 when llc-22/ld.lld-22 are absent.
set -euo pipefail
cd "$(dirname "$0")/.."

need_llvm=0
for tool in llc-22 ld.lld-22 llvm-objdump-22; do command -v "$tool" >/dev/null || need_llvm=1; done
if [ -n "${ROCKE_LLVM_DIR:-}" ] && [ -x "$ROCKE_LLVM_DIR/llc" ]; then need_llvm=0; fi
if [ "$need_llvm" = 1 ]; then
  echo "setup: installing Debian llvm-22 lld-22" >&2
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends llvm-22 lld-22 >/dev/null
fi

# npm ci when node_modules is missing or older than the lockfile.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error
fi
