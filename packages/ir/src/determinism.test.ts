import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { printModule } from './printer.js';
import { getTarget, TARGET_NAMES } from './targets/index.js';
import { axpyKernel, ldsReverseKernel, mmaKernel } from './test-kernels.js';

const srcDir = import.meta.dirname;
const outDir = mkdtempSync(join(tmpdir(), 'rocke-ir-determinism-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

/** Every module the test kernels produce, in a fixed order, as one text. */
const SCRIPT = `
import { printModule } from './printer.js';
import { getTarget, TARGET_NAMES } from './targets/index.js';
import { axpyKernel, ldsReverseKernel, mmaKernel } from './test-kernels.js';
let out = '';
for (const name of TARGET_NAMES) {
  const t = getTarget(name);
  out += printModule(axpyKernel(t)) + printModule(ldsReverseKernel(t));
  for (const a of t.atoms) out += printModule(mmaKernel(t, a));
}
process.stdout.write(out);
`;

function inProcess(): string {
  let out = '';
  for (const name of TARGET_NAMES) {
    const t = getTarget(name);
    out += printModule(axpyKernel(t)) + printModule(ldsReverseKernel(t));
    for (const a of t.atoms) out += printModule(mmaKernel(t, a));
  }
  return out;
}

/** Transpiles the package sources (not tests) to plain ESM so a bare `node` can run them. */
function transpileSources(): void {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
  for (const file of walk(srcDir)) {
    if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue;
    const js = ts.transpileModule(readFileSync(file, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    }).outputText;
    const dest = join(outDir, relative(srcDir, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(dest), { recursive: true });
    writeFileSync(dest, js.replaceAll('__PACKAGE_VERSION__', '"0.0.0-test"'));
  }
  writeFileSync(join(outDir, 'package.json'), '{"type":"module"}\n');
  writeFileSync(join(outDir, 'emit.js'), SCRIPT);
}

describe('determinism', () => {
  it('two separate node processes print byte-identical modules, equal to this process', () => {
    transpileSources();
    const run = (seed: number) => execFileSync(process.execPath, [`--random-seed=${seed}`, join(outDir, 'emit.js')], { cwd: outDir, encoding: 'utf8' });
    const first = run(1);
    const second = run(987654321);
    expect(first.length).toBeGreaterThan(10_000);
    expect(second).toBe(first);
    expect(inProcess()).toBe(first);
  });
});
