import { describe, expect, it } from 'vitest';
import { residency } from './residency.js';
import { registerEstimate } from './spill.js';
import { gfx950Spec, sm90Spec } from './test-fixtures.js';

describe('residency', () => {
  it('gfx950 parity base: LDS allows 2 per CU (163840 / 64096)', () => {
    const r = residency(gfx950Spec());
    // threads 2048/256 = 8; registers: 4 waves -> 1 per SIMD, floor(512 / 152) = 3 waves per SIMD.
    expect(r.limits).toEqual({ threads: 8, shared: 2, registers: 3, blocks: null });
    expect([r.perUnit, r.limitedBy, r.slots, r.registersPerLane]).toEqual([2, 'shared', 512, 152]);
  });

  it('double buffering drops the CU to 1 resident workgroup', () => {
    expect(residency(gfx950Spec({ tile_h: 16, tile_k: 128, ck: 16, waves_m: 2, waves_n: 4 })).limits.shared).toBe(2);
    expect(residency(gfx950Spec({ tile_h: 16, tile_k: 128, ck: 16, waves_m: 2, waves_n: 4, double_buffer: true })).limits.shared).toBe(1);
  });

  it('sm_90: threads, shared with the 1 KiB reservation, registers capped at 255 and 32 blocks', () => {
    const spec = sm90Spec();
    expect(registerEstimate(spec).live).toBe(300);
    const r = residency(spec);
    // 2048/128 = 16; 233472 / (64096 + 1024) = 3; 65536 / (128 x 255) = 2.
    expect(r.limits).toEqual({ threads: 16, shared: 3, registers: 2, blocks: 32 });
    expect([r.perUnit, r.limitedBy, r.slots]).toEqual([2, 'registers', 264]);
  });
});
