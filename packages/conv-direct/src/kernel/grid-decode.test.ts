import { Builder, constI32, Module, printModule, voidT } from '@rocke/ir';
import { describe, expect, it } from 'vitest';
import { launchGrid } from '../grid.js';
import { problem3x3, sm90Spec } from '../test-fixtures.js';
import { buildConvKernel } from './build.js';
import { cellCount, chipletRemap, decodeCell, decodeWorkgroup, emitDecodeWorkgroup } from './grid-decode.js';

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

describe('image tiles (tile_n)', () => {
  it('counts ceil(N / tile_n) image tiles and starts each at a multiple of tile_n', () => {
    expect(cellCount(4, 5, 2)).toBe(12);
    expect(cellCount(4, 5, 1)).toBe(20);
    expect(cellCount(1, 4, 4)).toBe(1);
    // 3 spatial tiles per image, N 5, tile_n 2: cells 0..8 cover images 0-1, 2-3, 4 (and the unused 5).
    const cells = Array.from({ length: cellCount(3, 5, 2) }, (_, c) => decodeCell(c, 3, 2));
    expect(cells.map((c) => c.image)).toEqual([0, 0, 0, 2, 2, 2, 4, 4, 4]);
    expect(cells.map((c) => c.spatial)).toEqual([0, 1, 2, 0, 1, 2, 0, 1, 2]);
  });

  it('matches the kernels\' IR decode and launchGrid', () => {
    for (const tile_n of [1, 2, 4]) {
      const spec = sm90Spec({ tile_w: 8, tile_k: 32, waves_m: 1, waves_n: 2, tile_n });
      for (const N of [1, 3, 5, 8]) {
        const problem = problem3x3({ N, H: 7, W: 7, C: 32, K: 64 });
        const grid = launchGrid(spec, problem);
        expect(grid.nTiles).toBe(Math.ceil(N / tile_n));
        expect(grid.workgroups).toBe(cellCount(grid.wTiles * grid.hTiles, N, tile_n) * grid.kTiles);
      }
    }
    const ir = printModule(buildConvKernel(sm90Spec({ tile_w: 8, tile_k: 32, waves_m: 1, waves_n: 2, tile_n: 4 })).module);
    expect(ir).toMatch(/%n\.tiles = udiv i32 %\S+, 4/);
    expect(ir).toMatch(/%n = mul i32 %n\.tile, 4/);
    expect(printModule(buildConvKernel(sm90Spec({ tile_w: 8, tile_k: 32, waves_m: 1, waves_n: 2 })).module)).not.toContain('n.tiles');
  });
});
