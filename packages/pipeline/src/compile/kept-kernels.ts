import { AMD_OCCUPANCY_MODELS, amdWavesPerSimd, KernelFactsSchema, nvBlocksPerSm, SM90_OCCUPANCY_MODEL, type KernelFacts } from '@rocke/elf-prune';
import type { CacheEntry } from '../cache/cache.js';
import { parseFamilySpec } from '@rocke/ir';
import type { AnyFamily } from './family.js';
import { formatBytes, formatTable } from '../table.js';

/** One kernel compile-all kept, with what its code object says about it. */
export interface KeptKernelRow {
  kernelName: string;
  family: string;
  variant: string;
  target: string;
  /** The family's summary of the spec's key fields (tile, channel chunk, waves, ...); '' when it has none. */
  tile: string;
  /** AMD: architectural VGPRs, AGPRs, SGPRs; NVIDIA: registers per thread in `vgpr`, the others null. */
  vgpr: number | null;
  agpr: number | null;
  sgpr: number | null;
  /** LDS / shared bytes per workgroup: the code object's static bytes plus the launch's dynamic bytes. */
  ldsBytes: number | null;
  /**
   * `8 waves/simd (vgpr)` or `2 blocks/sm (shared)`: elf-prune's occupancy model over the binary's
   * registers and the LDS above; null without facts or an occupancy model.
   */
  occupancy: string | null;
  /** Spill counts (`0`, or `vgpr 12 sgpr 0` / `12 instr`); null without facts (PTX). */
  spills: string | null;
  /** Names of the problems that selected it (problem sets only). */
  shapes: string[];
}

/** An entry's stored facts read through elf-prune's schema; null when it has none or they do not read. */
function factsOf(entry: CacheEntry): KernelFacts | null {
  if (entry.facts === null) return null;
  const r = KernelFactsSchema.safeParse(entry.facts);
  return r.success ? r.data : null;
}

/** The family's summary and dynamic LDS of an entry's spec, the spec read once through its schema. */
function specColumns(entry: CacheEntry, family: AnyFamily | undefined): { tile: string; dynamicLds: number } {
  const parsed = family ? parseFamilySpec(family, entry.identity.spec) : undefined;
  if (!family || !parsed?.ok) return { tile: '', dynamicLds: 0 };
  return { tile: family.describe?.(parsed.spec) ?? '', dynamicLds: family.launchLdsBytes?.(parsed.spec) ?? 0 };
}

/**
 * The rows of the kept-kernels table: every entry not marked pruned, sorted by family, target,
 * variant and kernel name. Register, LDS, occupancy and spill columns come from the entry's facts
 * (elf-prune's `kernelFacts`) plus the family's `launchLdsBytes` (conv-direct kernels allocate all
 * their LDS at launch, which a binary does not show); the tile column from its family's `describe`.
 */
export function keptKernelRows(entries: readonly CacheEntry[], families: readonly AnyFamily[], shapesOf: ReadonlyMap<string, readonly string[]> = new Map()): KeptKernelRow[] {
  const byName = new Map(families.map((f) => [f.name, f]));
  const rows = entries
    .filter((e) => e.pruned === null)
    .map((e): KeptKernelRow => {
      const f = factsOf(e);
      const { tile, dynamicLds } = specColumns(e, byName.get(e.identity.family));
      const base = {
        kernelName: e.kernelName,
        family: e.identity.family,
        variant: e.identity.variant,
        target: e.identity.target,
        tile,
        shapes: [...(shapesOf.get(e.id) ?? [])],
      };
      if (f?.vendor === 'amd') {
        const lds = f.ldsBytes + dynamicLds;
        const model = AMD_OCCUPANCY_MODELS[f.target];
        // CDNA is wave64 only.
        const occ = model
          ? amdWavesPerSimd(model, { allocatedVgprs: f.registers.allocatedVgprs, sgprCount: f.registers.sgpr, ldsBytes: lds, workgroupSize: f.maxWorkgroupSize, wavefrontSize: 64 })
          : null;
        return {
          ...base,
          vgpr: f.registers.vgpr,
          agpr: f.registers.agpr,
          sgpr: f.registers.sgpr,
          ldsBytes: lds,
          occupancy: occ ? `${occ.value} waves/simd (${occ.limitedBy})` : null,
          spills: f.spills.any ? `vgpr ${f.spills.vgpr} sgpr ${f.spills.sgpr}` : '0',
        };
      }
      if (f?.vendor === 'nvidia') {
        const lds = f.ldsBytes + dynamicLds;
        const occ =
          f.target === 'sm_90' && f.maxThreadsPerBlock !== null
            ? nvBlocksPerSm(SM90_OCCUPANCY_MODEL, { registers: f.registers.regs, sharedBytes: lds, threadsPerBlock: f.maxThreadsPerBlock })
            : f.occupancy;
        return {
          ...base,
          vgpr: f.registers.regs,
          agpr: null,
          sgpr: null,
          ldsBytes: lds,
          occupancy: occ ? `${occ.value} blocks/sm (${occ.limitedBy})` : null,
          spills: f.spills.any ? `${f.spills.instructions} instr` : '0',
        };
      }
      return { ...base, vgpr: null, agpr: null, sgpr: null, ldsBytes: null, occupancy: null, spills: null };
    });
  const key = (r: KeptKernelRow) => [r.family, r.target, r.variant, r.kernelName].join('\u0000');
  return rows.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** The kept-kernels table as text (`-` for a fact the code object does not have, e.g. PTX). */
export function formatKeptKernels(rows: readonly KeptKernelRow[]): string {
  const dash = (v: string | number | null) => (v === null ? '-' : v);
  const withShapes = rows.some((r) => r.shapes.length > 0);
  const headers = ['kernel', 'variant', 'target', 'tile', 'vgpr', 'agpr', 'sgpr', 'lds', 'occupancy', 'spills', ...(withShapes ? ['shapes'] : [])];
  const body = rows.map((r) => [
    r.kernelName,
    r.variant,
    r.target,
    r.tile,
    dash(r.vgpr),
    dash(r.agpr),
    dash(r.sgpr),
    r.ldsBytes === null ? '-' : formatBytes(r.ldsBytes),
    dash(r.occupancy),
    dash(r.spills),
    ...(withShapes ? [r.shapes.join(',')] : []),
  ]);
  return formatTable(headers, body, ['left', 'left', 'left', 'left', 'right', 'right', 'right', 'right', 'left', 'right', 'left']);
}
