import { describe, expect, it } from 'vitest';
import * as ir from '@rocke/ir';
import { TARGETS } from '@rocke/ir';
import { ATOMS, CONV_ATOMS, TARGET_NAMES, WGMMA_MAX_N, isTargetName, isWarpgroupAtom } from './targets.js';

describe('target table', () => {
  it('gives the MFMA atoms the per-lane counts of their ISA definitions', () => {
    const rows = Object.values(ATOMS)
      .filter((a) => a.waveSize === 64)
      .map((a) => [a.name, a.fragA, a.fragB, a.accPerLane]);
    expect(rows).toEqual([
      ['32x32x16', 8, 8, 16],
      ['16x16x32', 8, 8, 4],
      ['32x32x8', 4, 4, 16],
      ['16x16x16', 4, 4, 4],
    ]);
  });

  it('plans with the hardware facts of @rocke/ir, and its atoms run on one wave (four for the warpgroup atom)', () => {
    expect([TARGETS.gfx950.waveSize, TARGETS.gfx942.waveSize, TARGETS.sm_90.waveSize]).toEqual([64, 64, 32]);
    expect([TARGETS.gfx950.ldsBytes, TARGETS.gfx942.ldsBytes, TARGETS.sm_90.ldsBytes]).toEqual([160 * 1024, 64 * 1024, 227 * 1024]);
    expect([TARGETS.gfx950.computeUnits, TARGETS.gfx942.computeUnits, TARGETS.sm_90.computeUnits]).toEqual([256, 304, 132]);
    for (const name of TARGET_NAMES) for (const a of CONV_ATOMS[name]) expect(ATOMS[a].waveSize).toBe(isWarpgroupAtom(a) ? 4 * TARGETS[name].waveSize : TARGETS[name].waveSize);
    expect(CONV_ATOMS.sm_90).toEqual(['m16n8k16', 'm64nNk16']);
  });

  it('marks only m64nNk16 as a warpgroup atom, with 8-pixel, 8-channel and 16-channel granules', () => {
    expect(Object.values(ATOMS).filter((a) => isWarpgroupAtom(a.name)).map((a) => a.name)).toEqual(['m64nNk16']);
    const a = ATOMS.m64nNk16;
    // No register fragments: wgmma reads both operands from shared memory.
    expect([a.m, a.n, a.k, a.waveSize, a.fragA, a.fragB, a.accPerLane]).toEqual([8, 8, 16, 128, 0, 0, 0]);
    expect(WGMMA_MAX_N).toBe(256);
    expect(CONV_ATOMS.gfx950.some(isWarpgroupAtom) || CONV_ATOMS.gfx942.some(isWarpgroupAtom)).toBe(false);
  });

  it('recognises target names', () => {
    expect(isTargetName('sm_90')).toBe(true);
    expect(isTargetName('gfx1100')).toBe(false);
    expect(CONV_ATOMS.gfx942).toEqual(['32x32x8', '16x16x16']);
  });
});

// The shared vitest preset sets resolve.conditions only for the client environment, so vitest may
// load @rocke/ir from a stale dist/ build that has no targets yet; the check runs once it resolves src.
const irTargets = typeof ir.getTarget === 'function';

describe.skipIf(!irTargets)('agreement with @rocke/ir targets (skipped when @rocke/ir resolves to a dist without targets)', () => {
  it('uses only atom shapes the IR targets have, with their per-lane counts', () => {
    for (const target of TARGET_NAMES) {
      const t = ir.getTarget(target);
      for (const name of CONV_ATOMS[target]) {
        const a = ATOMS[name];
        // The warpgroup MMA is not an MmaAtom in the IR: the target exposes it as warpgroupMma.
        if (isWarpgroupAtom(name)) continue;
        for (const dtype of ['f16', 'bf16'] as const) {
          const atom = t.atom({ m: a.m, n: a.n, k: a.k, dtype });
          expect([atom.lanes, atom.aType.count, atom.bType.count, atom.cType.count]).toEqual([a.waveSize, a.fragA, a.fragB, a.accPerLane]);
        }
      }
    }
  });
});

describe.skipIf(!irTargets)('warpgroup MMA agrees with @rocke/ir (skipped as above)', () => {
  it('sm_90 exposes warpgroupMma (not an MmaAtom) with the thread count and N range conv-direct plans with', () => {
    const sm90 = ir.getTarget('sm_90');
    const a = ATOMS.m64nNk16;
    expect(sm90.warpgroupMma?.threads).toBe(a.waveSize);
    expect(() => sm90.atom({ m: a.m, n: a.n, k: a.k, dtype: 'bf16' })).toThrow(/has no MMA atom/);
    // validate's N rule (multiple of 8 up to WGMMA_MAX_N) is the IR's.
    for (const n of [8, 64, 120, WGMMA_MAX_N]) expect(ir.isWgmmaN(n)).toBe(true);
    for (const n of [4, 12, WGMMA_MAX_N + 8]) expect(ir.isWgmmaN(n)).toBe(false);
    expect(ir.getTarget('gfx950').warpgroupMma).toBeUndefined();
    expect(ir.getTarget('gfx942').warpgroupMma).toBeUndefined();
  });
});
