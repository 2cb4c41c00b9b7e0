#!/usr/bin/env python3
"""Derives MFMA (lane, register) -> matrix entry tables from composable_kernel's ck_tile constants.

gfx950 (CDNA4) is not in AMD's Matrix Instruction Calculator, so its tables come from CK:
  include/ck_tile/ops/gemm/warp/warp_gemm_attribute_mfma_impl.hpp
      (commit 015d9f72df5adf20a2dc7d8f2ca84393da90b525): per instruction kAMLane, kBNLane,
      kABKLane, kABKPerLane, kCMLane, kCNLane, kCM0PerLane, kCM1PerLane (copied below);
  include/ck_tile/ops/gemm/warp/warp_gemm_attribute_mfma.hpp
      (commit 026e116f3d667ad95af6d750814de27d0cfbec42): WarpGemmAtrributeMfma's
      A/B/C tile_distribution_encoding, which turns those constants into lane/element maps:
        A: H = (<kAMLane>, <kABKLane, kABKPerLane>), P0 = (K.kABKLane, M.kAMLane), Y = K.kABKPerLane
           lane = kidx * kAMLane + m,  k = kidx * kABKPerLane + y
        B: the same with N and kBNLane
        C: H = (<kCM0PerLane, kCMLane, kCM1PerLane>, <kCNLane>), P0 = (M.kCMLane, N.kCNLane),
           Y = (M.kCM0PerLane, M.kCM1PerLane)
           lane = mlane * kCNLane + n,  y = m0 * kCM1PerLane + m1,
           m = m0 * kCMLane * kCM1PerLane + mlane * kCM1PerLane + m1
      D is written with C's encoding (CK keeps one CVecType for both).
The gfx942 instructions are derived too, so the test can check this derivation against the
calculator's tables for them. Vector element y of a 16-bit operand sits in register y // 2,
bits [16 * (y % 2) + 15 : 16 * (y % 2)], as the calculator's headers spell it.

  python3 derive-ck.py      (writes ck/*.csv beside this file)
"""
import os

# name: (M, N, K, kAMLane, kBNLane, kABKLane, kABKPerLane, kCMLane, kCNLane, kCM0PerLane, kCM1PerLane)
CK = {
    # gfx942 (CDNA3): WarpGemmAttributeMfmaImpl{F16F16,Bf16Bf16}F32M32N32K8 / M16N16K16
    'v_mfma_f32_32x32x8_f16': (32, 32, 8, 32, 32, 2, 4, 2, 32, 4, 4),
    'v_mfma_f32_32x32x8_bf16': (32, 32, 8, 32, 32, 2, 4, 2, 32, 4, 4),
    'v_mfma_f32_16x16x16_f16': (16, 16, 16, 16, 16, 4, 4, 4, 16, 1, 4),
    'v_mfma_f32_16x16x16_bf16': (16, 16, 16, 16, 16, 4, 4, 4, 16, 1, 4),
    # gfx950 (CDNA4): WarpGemmAttributeMfmaImpl{F16F16,Bf16Bf16}F32M32N32K16 / M16N16K32
    'v_mfma_f32_32x32x16_f16': (32, 32, 16, 32, 32, 2, 8, 2, 32, 4, 4),
    'v_mfma_f32_32x32x16_bf16': (32, 32, 16, 32, 32, 2, 8, 2, 32, 4, 4),
    'v_mfma_f32_16x16x32_f16': (16, 16, 32, 16, 16, 4, 8, 4, 16, 1, 4),
    'v_mfma_f32_16x16x32_bf16': (16, 16, 32, 16, 16, 4, 8, 4, 16, 1, 4),
}
LANES = 64


def ab_table(matrix, lanes_mn, klane, kper):
    """A[m][k] / B[k][n]: lane = kidx * lanes_mn + mn, k = kidx * kper + y."""
    assert lanes_mn * klane == LANES
    rows = []
    for lane in range(LANES):
        mn, kidx = lane % lanes_mn, lane // lanes_mn
        cells = []
        for y in range(kper):
            k = kidx * kper + y
            cells.append(f'A[{mn}][{k}]' if matrix == 'A' else f'B[{k}][{mn}]')
        rows.append(cells)
    header = [f'v{y // 2}.[{16 * (y % 2) + 15}:{16 * (y % 2)}]' for y in range(kper)]
    return header, rows


def c_table(matrix, cmlane, cnlane, cm0, cm1):
    assert cmlane * cnlane == LANES
    rows = []
    for lane in range(LANES):
        mlane, n = lane // cnlane, lane % cnlane
        cells = []
        for m0 in range(cm0):
            for m1 in range(cm1):
                m = m0 * cmlane * cm1 + mlane * cm1 + m1
                cells.append(f'{matrix}[{m}][{n}]')
        rows.append(cells)
    return [f'v{r}' for r in range(cm0 * cm1)], rows


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'ck')
    os.makedirs(out, exist_ok=True)
    for inst, (m, n, k, aml, bnl, kl, kpl, cml, cnl, cm0, cm1) in CK.items():
        assert kl * kpl == k and cml * cm1 * cm0 == m and cnl == n
        tables = {
            'A': ab_table('A', aml, kl, kpl),
            'B': ab_table('B', bnl, kl, kpl),
            'C': c_table('C', cml, cnl, cm0, cm1),
            'D': c_table('D', cml, cnl, cm0, cm1),
        }
        for matrix, (header, rows) in tables.items():
            lines = ['Source: composable_kernel ck_tile constants (derive-ck.py)', f'Instruction: {inst.upper()}',
                     ','.join(['lane', *header])]
            lines += [','.join([str(lane), *cells]) for lane, cells in enumerate(rows)]
            path = os.path.join(out, f'{inst}.{matrix}.csv')
            with open(path + '.tmp', 'w', encoding='ascii') as f:
                f.write('\n'.join(lines) + '\n')
            os.replace(path + '.tmp', path)


if __name__ == '__main__':
    main()
