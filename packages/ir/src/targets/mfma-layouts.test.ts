/**
 * The MFMA atoms' lane layouts checked against AMD's own tables (test-data/mfma-layouts, see its
 * README for provenance and how to regenerate): gfx942 against AMD's Matrix Instruction
 * Calculator (CDNA3), gfx950 against tables derived from composable_kernel's ck_tile constants.
 * Every atom, operand A/B/C/D, lane and vector element; both the pure layout (`a`/`b`/`c`) and
 * its IR twin (`aAt`/`bAt`/`cAt`, folded to constants for a constant lane).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Builder } from '../builder.js';
import { constI32 } from '../constants.js';
import type { Value } from '../ir.js';
import { Module } from '../module.js';
import { i32, voidT } from '../types.js';
import { gfx942, gfx950 } from './index.js';
import type { MatrixCoord, MmaAtom } from './target.js';

const DATA = join(import.meta.dirname, '..', '..', 'test-data', 'mfma-layouts');

type Operand = 'A' | 'B' | 'C' | 'D';
const OPERANDS: readonly Operand[] = ['A', 'B', 'C', 'D'];

/** One table: `entries[lane][element]` = the matrix entry that vector element holds. */
interface LayoutTable {
  readonly file: string;
  readonly entries: readonly (readonly MatrixCoord[])[];
}

/**
 * Parses a calculator-format CSV (two title lines, then `lane,<register columns>`). A register
 * column is `vR` (a 32-bit element) or `vR.[HI:LO]` (a 16-bit element); element index =
 * (32·R + LO) / element bits, the order in which the atom's vector type packs its elements.
 */
function parseTable(file: string, operand: Operand): LayoutTable {
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  const header = lines[2]!.split(',');
  if (header[0] !== 'lane') throw new Error(`${file}: third line is not the lane header`);
  const slots = header.slice(1).map((h) => {
    const x = /^v(\d+)(?:\.\[(\d+):(\d+)\])?$/.exec(h);
    if (!x) throw new Error(`${file}: register column ${h}`);
    const bits = x[2] === undefined ? 32 : Number(x[2]) - Number(x[3]) + 1;
    return (32 * Number(x[1]) + Number(x[3] ?? 0)) / bits;
  });
  const entries = lines.slice(3).map((line, lane) => {
    const cells = line.split(',');
    if (Number(cells[0]) !== lane) throw new Error(`${file}: row ${lane} is lane ${cells[0]}`);
    const row: MatrixCoord[] = [];
    cells.slice(1).forEach((cell, c) => {
      const x = /^([ABCD])\[(\d+)\]\[(\d+)\]$/.exec(cell);
      if (!x || x[1] !== operand) throw new Error(`${file}: lane ${lane} cell ${cell}`);
      row[slots[c]!] = { row: Number(x[2]), col: Number(x[3]) };
    });
    return row;
  });
  return { file, entries };
}

function tableFor(source: 'cdna3' | 'ck', instruction: string, operand: Operand): LayoutTable {
  return parseTable(join(DATA, source, `${instruction}.${operand}.csv`), operand);
}

const layoutOf = (atom: MmaAtom, operand: Operand) => (operand === 'A' ? atom.a : operand === 'B' ? atom.b : atom.c);
const countOf = (atom: MmaAtom, operand: Operand) => (operand === 'A' ? atom.aType : operand === 'B' ? atom.bType : atom.cType).count;

/** Every (lane, element) where `atom`'s layout of `operand` disagrees with `table`, as readable lines. */
function mismatches(atom: MmaAtom, operand: Operand, table: LayoutTable): string[] {
  const out: string[] = [];
  const count = countOf(atom, operand);
  if (table.entries.length !== atom.lanes) return [`${table.file}: ${table.entries.length} lanes, atom ${atom.name} has ${atom.lanes}`];
  const at = layoutOf(atom, operand);
  table.entries.forEach((want, lane) => {
    if (want.length !== count) out.push(`${table.file}: lane ${lane} holds ${want.length} elements, atom ${atom.name} ${operand} has ${count}`);
    for (let i = 0; i < count; i++) {
      const got = at(lane, i);
      const w = want[i];
      if (!w || got.row !== w.row || got.col !== w.col) {
        out.push(`${atom.target} ${atom.name} ${operand} lane ${lane} element ${i}: atom says [${got.row}][${got.col}], ${table.file.slice(DATA.length + 1)} says ${w ? `[${w.row}][${w.col}]` : 'nothing'}`);
      }
    }
  });
  return out;
}

/** The IR twin's (row, col) for a constant lane: the builder folds integer arithmetic on constants. */
function emittedCoord(atom: MmaAtom, operand: Operand, lane: number, i: number): MatrixCoord {
  const m = new Module({ triple: 'amdgcn-amd-amdhsa' });
  const b = new Builder(m, m.addFunction('layout', voidT, []));
  const emit = operand === 'A' ? atom.aAt : operand === 'B' ? atom.bAt : atom.cAt;
  const { row, col } = emit(b, constI32(lane), i);
  const num = (v: Value): number => {
    if (v.kind !== 'const.int' || v.type !== i32) throw new Error(`${atom.name} ${operand}: lane ${lane} element ${i} did not fold to an i32 constant`);
    return Number(v.value);
  };
  return { row: num(row), col: num(col) };
}

const sources = [
  { target: gfx942, source: 'cdna3' as const, what: "AMD's Matrix Instruction Calculator (CDNA3)" },
  { target: gfx950, source: 'ck' as const, what: "composable_kernel's ck_tile MFMA constants" },
];

for (const { target, source, what } of sources) {
  describe(`${target.name} MFMA atom layouts match ${what}`, () => {
    for (const atom of target.atoms) {
      for (const operand of OPERANDS) {
        it(`${atom.instruction} ${operand}: every lane and element`, () => {
          const table = tableFor(source, atom.instruction, operand);
          expect(mismatches(atom, operand, table)).toEqual([]);
          const at = layoutOf(atom, operand);
          for (let lane = 0; lane < atom.lanes; lane++) {
            for (let i = 0; i < countOf(atom, operand); i++) expect(emittedCoord(atom, operand, lane, i)).toEqual(at(lane, i));
          }
        });
      }
    }
  });
}

describe('the layout tables themselves', () => {
  it('has a table for every atom and operand, and no table without an atom', () => {
    const want = sources.flatMap(({ target, source }) => target.atoms.flatMap((a) => OPERANDS.map((o) => `${source}/${a.instruction}.${o}.csv`)));
    const cdna3 = readdirSync(join(DATA, 'cdna3')).filter((f) => f.endsWith('.csv')).map((f) => `cdna3/${f}`);
    expect(cdna3.sort()).toEqual(want.filter((f) => f.startsWith('cdna3/')).sort());
    for (const f of want) expect(() => readFileSync(join(DATA, f))).not.toThrow();
  });

  it("derives gfx942's tables from CK's constants exactly as the calculator prints them (so the gfx950 derivation method is checked too)", () => {
    for (const atom of gfx942.atoms) {
      for (const operand of OPERANDS) expect(tableFor('ck', atom.instruction, operand).entries).toEqual(tableFor('cdna3', atom.instruction, operand).entries);
    }
  });

  it('catches a wrong layout: a 32x32 C/D with the two lane halves swapped fails on every lane', () => {
    const atom = gfx950.atoms.find((a) => a.m === 32 && a.dtype === 'bf16')!;
    const wrong: MmaAtom = { ...atom, c: (lane, i) => atom.c(lane ^ 32, i) };
    for (const operand of ['C', 'D'] as const) {
      const found = mismatches(wrong, operand, tableFor('ck', atom.instruction, operand));
      expect(found).toHaveLength(64 * 16);
      expect(found[0]).toBe(`gfx950 32x32x16.bf16 ${operand} lane 0 element 0: atom says [4][0], ck/v_mfma_f32_32x32x16_bf16.${operand}.csv says [0][0]`);
    }
  });

  it('catches a wrong layout: a 16x16 A whose k runs across lanes instead of within them fails', () => {
    const atom = gfx942.atoms.find((a) => a.m === 16 && a.dtype === 'f16')!;
    const wrong: MmaAtom = { ...atom, a: (lane, i) => ({ row: lane % 16, col: 4 * i + Math.floor(lane / 16) }) };
    const found = mismatches(wrong, 'A', tableFor('cdna3', atom.instruction, 'A'));
    expect(found.length).toBeGreaterThan(0);
    expect(found[0]).toBe('gfx942 16x16x16.f16 A lane 0 element 1: atom says [0][4], cdna3/v_mfma_f32_16x16x16_f16.A.csv says [0][1]');
  });
});
