import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const LINT = resolve(import.meta.dirname, '../../../tools/lint.mjs');

/** A throwaway `pipeline` package with the given source files, linted alone. */
function lintFixture(files: Record<string, string>): { status: number | null; out: string } {
  const dir = join(mkdtempSync(join(tmpdir(), 'rocke-lint-')), 'pipeline');
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: '@rocke/pipeline', dependencies: { '@rocke/conv-direct': '*', '@rocke/ir': '*' } }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const r = spawnSync(process.execPath, [LINT, dir], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe('tools/lint.mjs: pipeline folders that know no kernel family (compile/, cache/, bench/, api/)', () => {
  it('fails on a conv-direct import in bench/, api/ or compile/, not in their tests or benchmarks or in cli/', () => {
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
});
