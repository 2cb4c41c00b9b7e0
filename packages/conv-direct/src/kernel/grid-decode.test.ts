import { Builder, constI32, Module, voidT } from '@rocke/ir';
import { describe, expect, it } from 'vitest';
import { chipletRemap, decodeWorkgroup, emitDecodeWorkgroup } from './grid-decode.js';

describe('workgroup decode', () => {
  const shapes = [
    { kTiles: 5, cells: 7, wgm: 8 },
    { kTiles: 12, cells: 9, wgm: 4 },
    { kTiles: 3, cells: 40, wgm: 1 },
  ];
  const chiplets = [null, { xcds: 4, chunk: 2 }, { xcds: 8, chunk: 64 }];

  it('is a bijection onto (kTile, cell) for every swizzle', () => {
    for (const { kTiles, cells, wgm } of shapes)
      for (const chiplet of chiplets) {
        const seen = new Set<string>();
        for (let id = 0; id < kTiles * cells; id++) {
          const { kTile, cell } = decodeWorkgroup(id, kTiles, cells, { wgm, chiplet });
          expect(kTile >= 0 && kTile < kTiles && cell >= 0 && cell < cells).toBe(true);
          seen.add(`${kTile},${cell}`);
        }
        expect(seen.size).toBe(kTiles * cells);
      }
  });

  it('varies the channel tile fastest inside a super-tile (wgm 1: spatial fastest)', () => {
    expect([0, 1, 2, 3].map((id) => decodeWorkgroup(id, 5, 7, { wgm: 8, chiplet: null }))).toEqual([
      { kTile: 0, cell: 0 },
      { kTile: 1, cell: 0 },
      { kTile: 2, cell: 0 },
      { kTile: 3, cell: 0 },
    ]);
    expect(decodeWorkgroup(5, 5, 7, { wgm: 8, chiplet: null })).toEqual({ kTile: 0, cell: 1 });
    expect(decodeWorkgroup(1, 5, 7, { wgm: 1, chiplet: null })).toEqual({ kTile: 0, cell: 1 });
  });

  it('chiplet remap sends chunk consecutive logical ids to one XCD and keeps the tail', () => {
    // 4 XCDs, chunk 2: hardware ids 0,4 (XCD 0) become logical 0,1.
    expect([0, 4, 1, 5].map((id) => chipletRemap(id, 16, 4, 2))).toEqual([0, 1, 2, 3]);
    expect(chipletRemap(17, 18, 4, 2)).toBe(17);
  });

  it('the IR twin computes the same decode (constant-folded by the builder)', () => {
    const m = new Module({ triple: 'amdgcn-amd-amdhsa' });
    const b = new Builder(m, m.addFunction('f', voidT, []));
    for (const { kTiles, cells, wgm } of shapes)
      for (const chiplet of chiplets)
        for (const id of [0, 1, 7, kTiles * cells - 1]) {
          const r = emitDecodeWorkgroup(b, constI32(id), constI32(kTiles), constI32(cells), { wgm, chiplet });
          const val = (v: typeof r.kTile) => (v.kind === 'const.int' ? Number(v.value) : NaN);
          expect({ kTile: val(r.kTile), cell: val(r.cell) }).toEqual(decodeWorkgroup(id, kTiles, cells, { wgm, chiplet }));
        }
  });
});
