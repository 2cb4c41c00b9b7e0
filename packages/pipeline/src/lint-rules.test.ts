import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const LINT = resolve(import.meta.dirname, '../../../tools/lint.mjs');

/** A throwaway package (`pipeline` unless named) with the given source files, linted alone. */
function lintFixture(files: Record<string, string>, name = 'pipeline'): { status: number | null; out: string } {
  const dir = join(mkdtempSync(join(tmpdir(), 'rocke-lint-')), name);
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `@rocke/${name}`, dependencies: { '@rocke/conv-direct': '*', '@rocke/ir': '*' } }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const r = spawnSync(process.execPath, [LINT, dir], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe('tools/lint.mjs: pipeline folders that know no kernel family (compile/, cache/, bench/, api/, cli/)', () => {
  it('fails on a conv-direct import in bench/, api/ or compile/, not in their tests or benchmarks or in the composition root cli/wiring.ts', () => {
    const conv = "import { kernelName } from '@rocke/conv-direct';\nexport const f = kernelName;\n";
    const r = lintFixture({
      'src/bench/uses-conv.ts': conv,
      'src/compile/uses-conv.ts': conv,
      'src/api/uses-conv.ts': conv,
      'src/bench/uses-conv.test.ts': conv,
      'src/api/uses-conv.bench.ts': conv,
      'src/cli/wiring.ts': conv,
      'src/bench/generic.ts': "import type { Family } from '@rocke/ir';\nexport type F = Family<unknown>;\n",
    });
    expect(r.status).toBe(1);
    const flagged = r.out.split('\n').filter((l) => l.includes('a family-agnostic module may not import @rocke/conv-direct'));
    expect(flagged.map((l) => l.split(':')[0]!.replace(/^.*\/pipeline\//, ''))).toEqual(['src/api/uses-conv.ts', 'src/bench/uses-conv.ts', 'src/compile/uses-conv.ts']);
  });

  it('fails on a kernel-package import in cli/ anywhere but the composition root cli/wiring.ts', () => {
    const conv = "import { problemLabel } from '@rocke/conv-direct';\nexport const f = problemLabel;\n";
    const r = lintFixture({
      'src/cli/wiring.ts': conv,
      'src/cli/plan-command.ts': conv,
      'src/cli/reduce.ts': "import type { SplitReduceSpec } from '@rocke/split-reduce';\nexport type S = SplitReduceSpec;\n",
      'src/cli/plan-command.test.ts': conv,
      'src/cli/uses-root.ts': "import { f } from './wiring.js';\nexport const g = f;\n",
    });
    expect(r.status).toBe(1);
    const flagged = r.out.split('\n').filter((l) => /a family-agnostic module may not import @rocke\/(conv-direct|split-reduce)/.test(l));
    expect(flagged.map((l) => l.split(':')[0]!.replace(/^.*\/pipeline\//, ''))).toEqual(['src/cli/plan-command.ts', 'src/cli/reduce.ts']);
  });
});

describe('tools/lint.mjs: the package graph and function length', () => {
  it('fails on an import cycle, type-only edges included, and names its modules', () => {
    const r = lintFixture({
      'src/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'src/b.ts': "import type { C } from './c.js';\nexport const b: C = 1;\n",
      'src/c.ts': "import { a } from './a.js';\nexport type C = number;\nexport const c = a;\n",
      'src/d.ts': "import { a } from './a.js';\nexport const d = a;\n",
    });
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/import cycle: \S*pipeline\/src\/a\.ts -> \S*pipeline\/src\/b\.ts -> \S*pipeline\/src\/c\.ts\n/);
    expect(r.out).not.toMatch(/d\.ts/);
  });

  it("fails on a package importing pipeline's internal paths (or pipeline at all), and on reaching past a sibling's exports", () => {
    // The specifiers are spliced in so that linting this file does not read them as its own imports.
    const importing = (name: string, spec: string) => `import { ${name} } from '${spec}';\nexport const f = ${name};\n`;
    const r = lintFixture({ 'src/uses-pipeline.ts': importing('cliOp', '@rocke/pipeline/src/cli/wiring.js') }, 'conv-direct');
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/uses-pipeline\.ts: conv-direct may not depend on @rocke\/pipeline/);
    expect(r.out).toMatch(/uses-pipeline\.ts: reaches into @rocke\/pipeline\/src\/cli\/wiring\.js; import the package or one of its exports/);
    const inner = lintFixture({ 'src/bench/inner.ts': importing('launchGrid', '@rocke/ir/src/launch.js') });
    expect(inner.out).toMatch(/inner\.ts: reaches into @rocke\/ir\/src\/launch\.js/);
  });

  it('fails on a function over 120 lines in pipeline unless its body is mostly one switch', () => {
    const body = Array.from({ length: 125 }, (_, i) => `  n += ${i};`).join('\n');
    const cases = Array.from({ length: 125 }, (_, i) => `    case ${i}: return ${i};`).join('\n');
    const r = lintFixture({
      'src/long.ts': `export function long(): number {\n  let n = 0;\n${body}\n  return n;\n}\n`,
      'src/switch.ts': `export function dispatch(k: number): number {\n  switch (k) {\n${cases}\n  }\n  return -1;\n}\n`,
    });
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/src\/long\.ts:1: function long is 129 lines/);
    expect(r.out).not.toMatch(/dispatch/);
  });
});
