import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GoldenMismatchError, checkGoldenSnapshots, checkGoldens, goldenUpdateRequested, sha256Hex } from './goldens.js';
import type { GoldenCase } from './goldens.js';
import { printModule } from './printer.js';
import { getTarget, TARGET_NAMES } from './targets/index.js';
import { axpyKernel, ldsReverseKernel, mmaKernel } from './test-kernels.js';

const dir = mkdtempSync(join(tmpdir(), 'rocke-ir-goldens-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cases = (texts: Record<string, string>): GoldenCase[] => Object.entries(texts).map(([name, text]) => ({ name, flavor: 'llvm22', text }));

describe('goldens', () => {
  it('sha256Hex is the SHA-256 of the UTF-8 text', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('update mode writes a sorted canonical file; check mode then passes', () => {
    const file = join(dir, 'a.json');
    const r = checkGoldens(cases({ zeta: 'z', alpha: 'a' }), file, { update: true });
    expect(r).toMatchObject({ added: ['llvm22/alpha', 'llvm22/zeta'], updated: true });
    expect(readFileSync(file, 'utf8')).toBe(`{\n  "version": 1,\n  "digests": {\n    "llvm22": {\n      "alpha": "${sha256Hex('a')}",\n      "zeta": "${sha256Hex('z')}"\n    }\n  }\n}\n`);
    expect(checkGoldens(cases({ alpha: 'a', zeta: 'z' }), file, { update: false })).toMatchObject({ matched: 2, updated: false, added: [], removed: [], changed: [] });
  });

  it('check mode fails on added, removed and changed cases with a readable list, and leaves the file alone', () => {
    const file = join(dir, 'b.json');
    checkGoldens(cases({ keep: 'k', gone: 'g', edit: 'e1' }), file, { update: true });
    const before = readFileSync(file, 'utf8');
    let err: unknown;
    try {
      checkGoldens(cases({ keep: 'k', edit: 'e2', fresh: 'f' }), file, { update: false });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GoldenMismatchError);
    const g = err as GoldenMismatchError;
    expect(g.report.added).toEqual(['llvm22/fresh']);
    expect(g.report.removed).toEqual(['llvm22/gone']);
    expect(g.report.changed).toEqual([{ key: 'llvm22/edit', stored: sha256Hex('e1'), actual: sha256Hex('e2') }]);
    expect(g.message).toContain('+ llvm22/fresh: new case, no stored digest');
    expect(g.message).toContain('- llvm22/gone: stored digest, case no longer produced');
    expect(g.message).toContain(`~ llvm22/edit: ${sha256Hex('e1').slice(0, 12)} -> ${sha256Hex('e2').slice(0, 12)}`);
    expect(g.message).toContain('ROCKE_UPDATE_GOLDENS=1');
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('a missing file means every case is new; bad files and duplicate cases are errors', () => {
    expect(() => checkGoldens(cases({ x: '1' }), join(dir, 'none.json'), { update: false })).toThrow(/\+ llvm22\/x/);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{');
    expect(() => checkGoldens([], bad, { update: false })).toThrow(/is not valid JSON/);
    writeFileSync(bad, '{"digests":{}}');
    expect(() => checkGoldens([], bad, { update: false })).toThrow(/not a version-1 golden file/);
    expect(() => checkGoldens([...cases({ x: '1' }), ...cases({ x: '2' })], bad, { update: true })).toThrow(/duplicate golden case llvm22\/x/);
  });

  it('update mode is requested only by ROCKE_UPDATE_GOLDENS=1', () => {
    expect(goldenUpdateRequested({ ROCKE_UPDATE_GOLDENS: '1' })).toBe(true);
    expect(goldenUpdateRequested({ ROCKE_UPDATE_GOLDENS: 'true' })).toBe(false);
    expect(goldenUpdateRequested({})).toBe(false);
  });

  it('the test kernels match their stored digests (npm run goldens:update after an intended change)', () => {
    const all: GoldenCase[] = [];
    for (const name of TARGET_NAMES) {
      const t = getTarget(name);
      all.push({ name: `${name}/axpy`, flavor: t.flavor, text: printModule(axpyKernel(t)) });
      all.push({ name: `${name}/lds_reverse`, flavor: t.flavor, text: printModule(ldsReverseKernel(t)) });
      for (const a of t.atoms) all.push({ name: `${name}/mma_${a.name}`, flavor: t.flavor, text: printModule(mmaKernel(t, a)) });
    }
    const report = checkGoldens(all, join(import.meta.dirname, 'test-kernels.goldens.json'));
    if (!goldenUpdateRequested()) expect(report.matched).toBe(all.length);
  });
});

describe('golden snapshots', () => {
  it('writes missing or changed .ll files only in update mode, and names the first differing line otherwise', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rocke-snap-'));
    try {
      const one: GoldenCase = { name: 'k', flavor: 'llvm22', text: 'a\nb\nc\n' };
      expect(() => checkGoldenSnapshots([one], dir, { update: false })).toThrow(/no snapshot/);
      expect(checkGoldenSnapshots([one], dir, { update: true })).toEqual([join(dir, 'llvm22', 'k.ll')]);
      expect(readFileSync(join(dir, 'llvm22', 'k.ll'), 'utf8')).toBe(one.text);
      expect(checkGoldenSnapshots([one], dir, { update: false })).toEqual([]);
      expect(() => checkGoldenSnapshots([{ ...one, text: 'a\nB\nc\n' }], dir, { update: false })).toThrow(/line 2 differs\n\s+snapshot: b\n\s+emitted: {2}B/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
