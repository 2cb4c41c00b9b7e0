import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { kernargValues, packKernargs, resolveKernargs } from './abi.js';
import { balancedChunks, MAX_PLAN_LAUNCHES, plan } from './plan.js';
import { PlanError } from './plan-error.js';
import { problemGeometry } from './problem.js';
import { gfx950Spec, problem3x3, sm90Spec } from './test-fixtures.js';
import { MAX_TENSOR_BYTES } from './targets.js';

describe('balancedChunks', () => {
  it('splits as evenly as possible, never 999 + 1', () => {
    expect(balancedChunks(1000, 999)).toEqual([500, 500]);
    expect(balancedChunks(1000, 508)).toEqual([500, 500]);
    expect(balancedChunks(1017, 508)).toEqual([339, 339, 339]);
    expect(balancedChunks(509, 508)).toEqual([255, 254]);
    expect(balancedChunks(7, 100)).toEqual([7]);
    expect(() => balancedChunks(0, 4)).toThrow(PlanError);
    expect(() => balancedChunks(4, 0)).toThrow('images per chunk must be a positive integer (got 0)');
  });

  it('covers the batch with the fewest chunks, each within the cap and within one of the others', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100000 }), fc.integer({ min: 1, max: 5000 }), (n, cap) => {
        const c = balancedChunks(n, cap);
        expect(c.reduce((a, b) => a + b, 0)).toBe(n);
        expect(c.length).toBe(Math.ceil(n / cap));
        expect(Math.max(...c)).toBeLessThanOrEqual(cap);
        expect(Math.max(...c) - Math.min(...c)).toBeLessThanOrEqual(1);
      }),
    );
  });
});

describe('plan: single launch', () => {
  it('computes grid, block, LDS and kernargs', () => {
    const p = problem3x3({ N: 2, H: 16, W: 32, C: 64, K: 128 });
    const pl = plan(gfx950Spec(), p, 'gfx950');
    expect(pl.launches).toHaveLength(1);
    const l = pl.launches[0]!;
    // ceil(32/32) x ceil(16/8) x N 2 x ceil(128/64)
    expect(l.grid).toEqual([8, 1, 1]);
    expect(l.block).toEqual([256, 1, 1]);
    expect(l.sharedBytes).toBe(64096);
    expect(l.kernargs).toEqual(kernargValues('dense', p, { x: { buffer: 'x', offsetBytes: 0 }, w: { buffer: 'w', offsetBytes: 0 }, y: { buffer: 'y', offsetBytes: 0 } }));
    expect([l.xOffsetBytes, l.yOffsetBytes, l.images, l.splits, l.workspaceBytes]).toEqual([0, 0, { start: 0, count: 2 }, 1, 0]);
    expect(pl.workspaceBytes).toBe(0);
    expect(pl.splits).toBeUndefined();
    expect(pl.explain).toContain('one launch covers all 2 images');
  });

  it('uses warp-sized blocks on sm_90 and grouped tile counts per merged group', () => {
    const p = problem3x3({ N: 1, H: 8, W: 32, C: 128, K: 128, groups: 16 }); // cpg = kpg = 8
    const spec = sm90Spec({ variant: 'grouped', group_merge: 4, tile_k: 32, waves_m: 2, ck: 32 });
    const l = plan(spec, p, 'sm_90').launches[0]!;
    expect(l.block).toEqual([128, 1, 1]);
    // 1 w tile x 1 h tile x N 1 x (16/4 merged groups x ceil(32/32))
    expect(l.grid).toEqual([4, 1, 1]);
    expect(l.kernargs.slice(-2)).toEqual([8, 8]);
  });

  it('refuses mismatches with reasons', () => {
    const p = problem3x3();
    expect(() => plan(gfx950Spec(), p, 'gfx942')).toThrow('spec is built for gfx950, not gfx942');
    expect(() => plan(gfx950Spec({ tile_w: 48 }), p, 'gfx950')).toThrow("invalid spec: tile_w 48 is not a multiple of the atom's N 32 (32x32x16)");
    expect(() => plan(gfx950Spec(), { ...p, groups: 0 }, 'gfx950')).toThrow('invalid problem: problem.groups must be >= 1 (got 0)');
    expect(() => plan(gfx950Spec(), { ...p, C: 48 }, 'gfx950')).toThrow('spec cannot serve this problem: C 48 is not a multiple of ck 32');
    expect(() => plan(gfx950Spec(), p, 'gfx950', { splits: 2 })).toThrow('splits 2 needs the split_c variant (spec is dense)');
  });
});

describe('plan: batches past the 32-bit buffer range', () => {
  // 128x128x128 bf16 = 4 MiB per image; 0x7F000000 = 508 images exactly.
  const big = problem3x3({ N: 1000, H: 128, W: 128, C: 128, K: 128 });

  it('plans a 4 GiB batch (not run) as balanced chunks over views of the same buffers', () => {
    const g = problemGeometry(big);
    expect(g.xBytes).toBeGreaterThan(2 ** 31);
    const pl = plan(gfx950Spec(), big, 'gfx950');
    expect(pl.launches.map((l) => l.images)).toEqual([
      { start: 0, count: 500 },
      { start: 500, count: 500 },
    ]);
    const [a, b] = pl.launches as [(typeof pl.launches)[0], (typeof pl.launches)[0]];
    expect([a.xOffsetBytes, b.xOffsetBytes]).toEqual([0, 500 * 2 * 128 * 128 * 128]);
    expect(b.yOffsetBytes).toBe(500 * g.yImageBytes);
    expect(b.kernargs[0]).toEqual({ buffer: 'x', offsetBytes: 2097152000 });
    expect(b.kernargs[1]).toEqual({ buffer: 'w', offsetBytes: 0 });
    expect(b.kernargs[2]).toEqual({ buffer: 'y', offsetBytes: 2097152000 });
    expect(b.kernargs[3]).toBe(500 * g.xImageBytes); // x_bytes of the view
    expect(b.kernargs[6]).toBe(500); // N
    expect(b.grid[0]).toBe(a.grid[0]);
    expect(a.grid[0]).toBe(4 * 16 * 500 * 2);
    for (const l of pl.launches) expect(l.kernargs[3] as number).toBeLessThanOrEqual(MAX_TENSOR_BYTES);
    const packed = new DataView(packKernargs('dense', resolveKernargs(b.kernargs, { x: 0x10_0000_0000n, w: 0x20_0000_0000n, y: 0x30_0000_0000n })).buffer);
    expect(packed.getBigUint64(0, true)).toBe(0x10_0000_0000n + 2097152000n);
    expect(packed.getBigUint64(16, true)).toBe(0x30_0000_0000n + 2097152000n);
    expect(pl.explain.some((e) => /2 balanced chunks of 500\.\.500 images \(at most 508 per launch, set by x at 4194304 bytes per image\)/.test(e))).toBe(true);
  });

  it('refuses a batch needing more than MAX_PLAN_LAUNCHES launches before building any, with the sizes', () => {
    // 128x128x128 bf16: 508 images per launch. 1e11 images would be ~2e8 launches (and a spread of
    // them overflowed the stack); the limit's edge still plans.
    const started = Date.now();
    expect(() => plan(gfx950Spec(), problem3x3({ N: 1e11, H: 128, W: 128, C: 128, K: 128 }), 'gfx950')).toThrow(
      new PlanError(
        `batch of 100000000000 needs 196850394 launches of at most 508 images, over the limit of ${MAX_PLAN_LAUNCHES} per plan ` +
          '(x is 419430400000000000 bytes, y 419430400000000000: more than one device holds); split the batch',
      ),
    );
    expect(Date.now() - started).toBeLessThan(1000);
    expect(plan(gfx950Spec(), problem3x3({ N: 508 * MAX_PLAN_LAUNCHES, H: 128, W: 128, C: 128, K: 128 }), 'gfx950').launches).toHaveLength(MAX_PLAN_LAUNCHES);
    expect(() => plan(gfx950Spec(), problem3x3({ N: 508 * MAX_PLAN_LAUNCHES + 1, H: 128, W: 128, C: 128, K: 128 }), 'gfx950')).toThrow(/over the limit of 1024 per plan/);
  });

  it('chunks on y when the output is the larger tensor and keeps chunks contiguous', () => {
    const p = problem3x3({ N: 1017, H: 128, W: 128, C: 32, K: 128 });
    const pl = plan(gfx950Spec({ ck: 32 }), p, 'gfx950');
    expect(pl.launches.map((l) => l.images.count)).toEqual([339, 339, 339]);
    pl.launches.forEach((l, i) => expect(l.yOffsetBytes).toBe(i * 339 * 2 * 128 * 128 * 128));
    expect(pl.explain.join('\n')).toMatch(/set by y at 4194304 bytes per image/);
  });

  it('rejects a single image over the range, naming the sizes', () => {
    const p = problem3x3({ N: 2, H: 1024, W: 1024, C: 1024, K: 64 });
    expect(() => plan(gfx950Spec(), p, 'gfx950')).toThrow(
      new PlanError('one image of x is 2147483648 bytes (H 1024 x W 1024 x C 1024 x 2), over the per-launch limit 0x7F000000 (2130706432); the batch cannot be split below one image'),
    );
    const w = problem3x3({ N: 1, H: 3, W: 3, C: 8192, K: 16384 });
    expect(() => plan(gfx950Spec(), w, 'gfx950')).toThrow(/^w is 2415919104 bytes \(K 16384 x 3x3 x cpg 8192 x 2\), over the per-launch limit .*weights cannot be chunked$/);
  });
});

describe('plan: split_c', () => {
  const spec = gfx950Spec({ variant: 'split_c' });
  const p = problem3x3({ N: 1, H: 14, W: 14, C: 1024, K: 1024 });

  it('chooses splits, sizes the workspace and lists the reduce step', () => {
    const pl = plan(spec, p, 'gfx950', { minWaves: 2 });
    expect(pl.splits).toBe(32);
    const l = pl.launches[0]!;
    expect(l.grid[0]).toBe(1 * 2 * 1 * 16 * 32);
    expect(l.kernargs.slice(-3)).toEqual([{ buffer: 'ws', offsetBytes: 0 }, 4 * 32 * 14 * 14 * 1024, 32]);
    expect(pl.workspaceBytes).toBe(4 * 32 * 14 * 14 * 1024);
    expect(pl.reduce).toEqual([{ launchIndex: 0, splits: 32, elements: 14 * 14 * 1024, wsOffsetBytes: 0, yOffsetBytes: 0, dtype: 'bf16' }]);
    expect(pl.explain.join('\n')).toMatch(/chose splits 32: the smallest reaching 2 waves/);
    // By default the cost model chooses the count (and says so).
    expect(plan(spec, p, 'gfx950').explain.join('\n')).toMatch(/chose splits \d+: the lowest predicted time of the cost model/);
  });

  it('takes a caller split count and rejects bad ones with the validation reason', () => {
    expect(plan(spec, p, 'gfx950', { splits: 4 }).launches[0]!.splits).toBe(4);
    // Uneven slices of whole chunks: 32 chunks of ck 32 as 11 + 11 + 10.
    expect(plan(spec, p, 'gfx950', { splits: 3 }).launches[0]!.splits).toBe(3);
    expect(() => plan(spec, p, 'gfx950', { splits: 64 })).toThrow('spec cannot serve this problem: splits 64 leaves a slice without channels: C 1024 is 32 runs of ck 32');
  });

  it('chunks big batches and reuses one workspace across chunks', () => {
    const b = problem3x3({ N: 1000, H: 128, W: 128, C: 128, K: 128 });
    const pl = plan(spec, b, 'gfx950');
    // ws at one split is 2x y per image, so ws bounds the chunk: floor(0x7F000000 / 8 MiB) = 254 images.
    expect(pl.launches.map((l) => l.images.count)).toEqual([250, 250, 250, 250]);
    expect(pl.splits).toBe(1);
    expect(pl.workspaceBytes).toBe(4 * 250 * 128 * 128 * 128);
    expect(pl.reduce!.map((r) => r.yOffsetBytes)).toEqual([0, 1, 2, 3].map((i) => i * 250 * 2 * 128 * 128 * 128));
    expect(pl.explain.join('\n')).toMatch(/chunks reuse the workspace/);
  });
});
