// Corrupted real objects: bit flips, truncations, inflated counts/offsets/sizes and hostile
// MessagePack. The only exception allowed out of codeFacts is ElfError, each case must finish
// within a small time budget, and nothing may allocate in proportion to a forged size.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ElfFile, SHT_NOTE, SHT_SYMTAB, SHT_DYNSYM } from './elf.js';
import { ElfError } from './errors.js';
import { codeFacts } from './facts.js';
import { compileAmd, compileNv, findPtxas, fixture, scratch } from './testing/toolchain.js';

/** Per-case time budget; a parse of these ~10-20 KiB files takes well under a millisecond. */
const CASE_BUDGET_MS = 250;
const CASES_PER_OBJECT = 2500;

/** mulberry32: small, seedable, deterministic. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Field {
  offset: number;
  size: 1 | 2 | 4 | 8;
}

/** Offsets of the fields a hostile file would forge: header, section headers, notes, symbols, .nv.info. */
function interestingFields(bytes: Uint8Array): { fields: Field[]; regions: [number, number][] } {
  const elf = new ElfFile(bytes);
  const h = elf.header;
  const fields: Field[] = [
    { offset: 32, size: 8 }, // e_phoff
    { offset: 40, size: 8 }, // e_shoff
    { offset: 58, size: 2 }, // e_shentsize
    { offset: 60, size: 2 }, // e_shnum
    { offset: 62, size: 2 }, // e_shstrndx
    { offset: 18, size: 2 }, // e_machine
  ];
  const regions: [number, number][] = [[0, 64], [h.shoff, h.shoff + elf.sections.length * 64]];
  for (const s of elf.sections) {
    const at = h.shoff + s.index * 64;
    fields.push({ offset: at, size: 4 }, { offset: at + 4, size: 4 }, { offset: at + 24, size: 8 }, { offset: at + 32, size: 8 });
    fields.push({ offset: at + 40, size: 4 }, { offset: at + 44, size: 4 }, { offset: at + 56, size: 8 });
    if (s.type === SHT_NOTE) {
      fields.push({ offset: s.offset, size: 4 }, { offset: s.offset + 4, size: 4 });
      regions.push([s.offset, s.offset + s.size]);
    }
    if (s.type === SHT_SYMTAB || s.type === SHT_DYNSYM) {
      for (let i = 0; i < s.size / 24; i++) {
        const sym = s.offset + i * 24;
        fields.push({ offset: sym, size: 4 }, { offset: sym + 6, size: 2 }, { offset: sym + 8, size: 8 }, { offset: sym + 16, size: 8 });
      }
      regions.push([s.offset, s.offset + s.size]);
    }
    if (s.name.startsWith('.nv.info') || s.name === '.rodata') {
      for (let o = s.offset; o + 4 <= s.offset + s.size; o += 4) fields.push({ offset: o + 2, size: 2 }, { offset: o, size: 4 });
      regions.push([s.offset, s.offset + s.size]);
    }
  }
  return { fields, regions };
}

const EXTREMES = [0n, 1n, 7n, 0x40n, 0xffn, 0xffffn, 0x7fffffffn, 0xffffffffn, 0x1_0000_0000n, 2n ** 53n + 1n, 2n ** 63n, 2n ** 64n - 1n];

function writeField(out: Uint8Array, f: Field, value: bigint): void {
  if (f.offset < 0 || f.offset + f.size > out.length) return;
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const masked = BigInt.asUintN(f.size * 8, value);
  if (f.size === 1) v.setUint8(f.offset, Number(masked));
  else if (f.size === 2) v.setUint16(f.offset, Number(masked), true);
  else if (f.size === 4) v.setUint32(f.offset, Number(masked), true);
  else v.setBigUint64(f.offset, masked, true);
}

/** One corrupted copy of `original`. */
function mutate(original: Uint8Array, fields: Field[], regions: [number, number][], next: () => number): Uint8Array {
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
  const inRegion = (): number => {
    const [lo, hi] = pick(regions);
    return lo + Math.floor(next() * Math.max(1, hi - lo));
  };
  let out: Uint8Array = original.slice();
  const steps = 1 + Math.floor(next() * 3);
  for (let s = 0; s < steps; s++) {
    const kind = Math.floor(next() * 6);
    if (kind === 0) {
      // Bit flips anywhere.
      for (let i = 1 + Math.floor(next() * 8); i > 0; i--) {
        const at = Math.floor(next() * out.length);
        out[at] = (out[at] ?? 0) ^ (1 << Math.floor(next() * 8));
      }
    } else if (kind === 1) {
      // Bit flips inside the structures the reader walks.
      for (let i = 1 + Math.floor(next() * 4); i > 0; i--) {
        const at = Math.min(out.length - 1, inRegion());
        out[at] = (out[at] ?? 0) ^ (1 << Math.floor(next() * 8));
      }
    } else if (kind === 2) {
      // Truncation, often right inside a structure.
      const cut = next() < 0.5 ? Math.floor(next() * out.length) : Math.min(out.length, inRegion());
      out = out.slice(0, cut);
    } else if (kind === 3) {
      // Inflated or zeroed counts, sizes, offsets and indices.
      const f = pick(fields);
      const near = BigInt(out.length) + BigInt(Math.floor(next() * 64)) - 32n;
      writeField(out, f, next() < 0.2 ? near : pick(EXTREMES));
    } else if (kind === 4) {
      // Hostile MessagePack headers (array32/map32/str32/bin32/ext32 with huge lengths).
      const at = inRegion();
      const marker = pick([0xdd, 0xdf, 0xdb, 0xc6, 0xc9, 0xdc, 0xde, 0x9f, 0x8f]);
      if (at + 5 <= out.length) {
        out[at] = marker;
        for (let i = 1; i < 5; i++) out[at + i] = 0xff;
      }
    } else {
      // Random bytes over a field-sized window.
      const f = pick(fields);
      for (let i = 0; i < f.size && f.offset + i < out.length; i++) out[f.offset + i] = Math.floor(next() * 256);
    }
  }
  return out;
}

interface Outcome {
  cases: number;
  parsed: number;
  rejected: number;
  foreign: string[];
  slowest: number;
}

function fuzz(original: Uint8Array, seed: number, cases: number): Outcome {
  const { fields, regions } = interestingFields(original);
  const next = rng(seed);
  const outcome: Outcome = { cases, parsed: 0, rejected: 0, foreign: [], slowest: 0 };
  for (let i = 0; i < cases; i++) {
    const input = mutate(original, fields, regions, next);
    const t0 = performance.now();
    try {
      codeFacts(input);
      outcome.parsed++;
    } catch (e) {
      if (e instanceof ElfError) {
        outcome.rejected++;
        // The error must name a real place in the input.
        if (!(Number.isSafeInteger(e.offset) && e.offset >= 0 && e.offset <= Math.max(input.length, original.length))) {
          outcome.foreign.push(`case ${i}: ElfError offset ${e.offset} outside the input (${e.message})`);
        }
      } else {
        outcome.foreign.push(`case ${i}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
      }
    }
    outcome.slowest = Math.max(outcome.slowest, performance.now() - t0);
  }
  return outcome;
}

const ptxas = findPtxas();
const tmp = scratch();
const objects: Record<string, Uint8Array> = {};
beforeAll(() => {
  objects['gfx950 spill'] = compileAmd(tmp.dir, 'spill', fixture('amd-spill.ll')).hsaco;
  const lds = compileAmd(tmp.dir, 'lds', fixture('amd-lds.ll'));
  objects['gfx950 two kernels'] = lds.hsaco;
  objects['gfx950 relocatable'] = lds.object;
  if (ptxas) objects['sm_90 cubin'] = compileNv(tmp.dir, 'nv', fixture('nv-kernels.ll'), ptxas).cubin;
});
afterAll(() => tmp.dispose());

describe('fuzzing codeFacts with corrupted real objects', () => {
  const names = ['gfx950 spill', 'gfx950 two kernels', 'gfx950 relocatable', ...(ptxas ? ['sm_90 cubin'] : [])];
  names.forEach((name, n) => {
    it(`${name}: ${CASES_PER_OBJECT} mutants raise only ElfError, each within ${CASE_BUDGET_MS} ms`, () => {
      const original = objects[name];
      if (!original) throw new Error(`object ${name} was not built`);
      expect(codeFacts(original).length).toBeGreaterThan(0);
      const outcome = fuzz(original, 0x5eed + n, CASES_PER_OBJECT);
      expect(outcome.foreign.slice(0, 5)).toEqual([]);
      expect(outcome.slowest).toBeLessThan(CASE_BUDGET_MS);
      // The mutations must actually reach the error paths, not just cosmetic bytes.
      expect(outcome.rejected).toBeGreaterThan(CASES_PER_OBJECT / 3);
      expect(outcome.parsed + outcome.rejected).toBe(CASES_PER_OBJECT);
    });
  });

  it('random bytes behind a valid ELF64 header raise only ElfError (fast-check)', () => {
    const header = objects['gfx950 spill']?.subarray(0, 64);
    if (!header) throw new Error('no header');
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), fc.array(fc.tuple(fc.nat(63), fc.nat(255)), { maxLength: 6 }), (tail, pokes) => {
        const input = new Uint8Array(64 + tail.length);
        input.set(header);
        input.set(tail, 64);
        for (const [at, value] of pokes) input[at] = value;
        try {
          codeFacts(input);
        } catch (e) {
          if (!(e instanceof ElfError)) throw e;
        }
      }),
      { numRuns: 2000, seed: 7 },
    );
  });
});
