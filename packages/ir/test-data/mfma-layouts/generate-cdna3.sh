#!/usr/bin/env bash
# Regenerates cdna3/*.csv with AMD's Matrix Instruction Calculator (the gfx942 = CDNA3 MFMA layouts).
#   bash generate-cdna3.sh /path/to/amd_matrix_instruction_calculator
# The calculator needs the `tabulate` Python module (any version: only its TSV output is used here).
# Tables committed with: calculator 1.3.2, commit 2ef91896bcdc4d26624f952e5c905c787cd9bc9e, tabulate 0.10.0.
set -euo pipefail
calc="${1:?usage: generate-cdna3.sh CALCULATOR_CHECKOUT}"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$here/cdna3"
for inst in v_mfma_f32_32x32x8_f16 v_mfma_f32_32x32x8_bf16 v_mfma_f32_16x16x16_f16 v_mfma_f32_16x16x16_bf16; do
  for m in A B C D; do
    python3 "$calc/matrix_calculator.py" --architecture cdna3 --instruction "$inst" --matrix-layout "-$m" --csv > "$here/cdna3/$inst.$m.csv.tmp"
    mv "$here/cdna3/$inst.$m.csv.tmp" "$here/cdna3/$inst.$m.csv"
  done
done
