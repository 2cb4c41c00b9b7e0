import { describe, expect, it } from 'vitest';
import type { CacheEntry, CodeKind } from '../cache/cache.js';
import type { Family } from '@rocke/ir';
import { z } from 'zod';
import type { JsonValue } from '../hash.js';
import { formatKeptKernels, keptKernelRows } from './kept-kernels.js';

const DIGEST = 'a'.repeat(64);

function entry(id: string, family: string, variant: string, target: string, spec: JsonValue, facts: JsonValue | null, kind: CodeKind, pruned = false): CacheEntry {
  return {
    format: 1,
    id,
    identity: { family, variant, target, flavor: 'llvm22', spec },
    kernelName: `k_${id}`,
    ir: { digest: DIGEST, size: 1 },
    code: { digest: DIGEST, size: 1, kind },
    toolchain: 'LLVM version 22',
    emitter: '',
    facts,
    pruned: pruned ? { reason: 'spills', detail: 'vgpr spills' } : null,
  };
}

function amdFacts(allocatedVgprs: number, staticLds: number, spills = { sgpr: 0, vgpr: 0 }): JsonValue {
  return {
    vendor: 'amd',
    target: 'gfx950',
    name: 'k',
    textDigest: DIGEST,
    codeBytes: 64,
    scratchBytes: 0,
    registers: { vgpr: allocatedVgprs - 8, agpr: 8, sgpr: 58, unifiedVgpr: allocatedVgprs, allocatedVgprs, allocatedSgprs: 64, accumOffset: 0 },
    ldsBytes: staticLds,
    maxWorkgroupSize: 256,
    spills: { ...spills, any: spills.sgpr + spills.vgpr > 0 },
    // What elf-prune reads from the binary alone (no dynamic LDS).
    occupancy: { unit: 'waves/simd', value: 4, limitedBy: 'vgpr' },
  };
}

function nvFacts(regs: number): JsonValue {
  return {
    vendor: 'nvidia',
    target: 'sm_90',
    name: 'k',
    textDigest: DIGEST,
    codeBytes: 64,
    scratchBytes: 0,
    registers: { regs },
    ldsBytes: 0,
    maxThreadsPerBlock: 256,
    spills: { instructions: 3, any: true },
    occupancy: { unit: 'blocks/sm', value: 2, limitedBy: 'registers' },
  };
}

/** A family whose specs carry their dynamic LDS bytes and a tile label. */
const ConvSpecSchema = z.object({ t: z.number(), lds: z.number() }).strict();
const conv: Family<z.infer<typeof ConvSpecSchema>> = {
  name: 'conv',
  targets: ['gfx950', 'sm_90'],
  schema: ConvSpecSchema,
  candidates: () => [],
  build: () => ({ kernelName: 'x', ir: '' }),
  describe: (spec) => `tile ${spec.t}`,
  launchLdsBytes: (spec) => spec.lds,
};

describe('keptKernelRows', () => {
  it('adds the launch LDS to the binary and recomputes occupancy with it (AMD and sm_90)', () => {
    const rows = keptKernelRows(
      [
        entry('a1', 'conv', 'dense', 'gfx950', { t: 8, lds: 0 }, amdFacts(128, 0), 'hsaco'),
        // 100 KiB: one workgroup of 4 waves per CU (160 KiB) = 1 wave per SIMD, below the VGPR bound of 4.
        entry('a2', 'conv', 'dense', 'gfx950', { t: 16, lds: 102400 }, amdFacts(128, 0, { sgpr: 0, vgpr: 12 }), 'hsaco'),
        // 128 registers × 256 threads: 2 blocks by registers; 50000 B shared would allow 4.
        entry('n1', 'conv', 'split_c', 'sm_90', { t: 8, lds: 50000 }, nvFacts(128), 'cubin'),
        // 120000 B (120064 allocated): one block per 228 KiB SM.
        entry('n2', 'conv', 'split_c', 'sm_90', { t: 8, lds: 120000 }, nvFacts(128), 'cubin'),
      ],
      [conv],
      new Map([['a2', ['shapeA', 'shapeB']]]),
    );
    expect(rows.map((r) => [r.kernelName, r.tile, r.vgpr, r.agpr, r.sgpr, r.ldsBytes, r.occupancy, r.spills, r.shapes])).toEqual([
      ['k_a1', 'tile 8', 120, 8, 58, 0, '4 waves/simd (vgpr)', '0', []],
      ['k_a2', 'tile 16', 120, 8, 58, 102400, '1 waves/simd (lds)', 'vgpr 12 sgpr 0', ['shapeA', 'shapeB']],
      ['k_n1', 'tile 8', 128, null, null, 50000, '2 blocks/sm (registers)', '3 instr', []],
      ['k_n2', 'tile 8', 128, null, null, 120000, '1 blocks/sm (shared)', '3 instr', []],
    ]);
  });

  it('drops pruned entries, sorts by family/target/variant/name, and shows - for what PTX lacks', () => {
    const rows = keptKernelRows(
      [
        entry('z', 'conv', 'dense', 'sm_90', { t: 8, lds: 0 }, null, 'ptx'),
        entry('p', 'conv', 'grouped', 'gfx950', { t: 8, lds: 0 }, amdFacts(64, 0), 'hsaco', true),
        entry('b', 'conv', 'grouped', 'gfx950', { t: 8, lds: 0 }, amdFacts(64, 0), 'hsaco'),
        entry('h', 'helper', 'split_reduce', 'gfx950', {}, amdFacts(64, 0), 'hsaco'),
        entry('a', 'conv', 'dense', 'gfx950', { t: 8, lds: 0 }, amdFacts(64, 0), 'hsaco'),
      ],
      [conv],
    );
    expect(rows.map((r) => r.kernelName)).toEqual(['k_a', 'k_b', 'k_z', 'k_h']);
    const ptx = rows[2]!;
    expect([ptx.vgpr, ptx.ldsBytes, ptx.occupancy, ptx.spills]).toEqual([null, null, null, null]);
    // A family without describe / launchLdsBytes: empty tile, the binary's LDS.
    expect([rows[3]!.tile, rows[3]!.ldsBytes, rows[3]!.occupancy]).toEqual(['', 0, '8 waves/simd (waves)']);
    const text = formatKeptKernels(rows);
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^kernel\s+variant\s+target\s+tile\s+vgpr\s+agpr\s+sgpr\s+lds\s+occupancy\s+spills$/);
    expect(lines).toHaveLength(2 + 4);
    expect(lines[4]).toMatch(/^k_z\s+dense\s+sm_90\s+tile 8\s+-\s+-\s+-\s+-\s+-\s+-$/);
    expect(lines[2]).toMatch(/^k_a\s+dense\s+gfx950\s+tile 8\s+56\s+8\s+58\s+0 B\s+8 waves\/simd \(waves\)\s+0$/);
  });
});
