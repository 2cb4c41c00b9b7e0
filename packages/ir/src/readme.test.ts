import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { compile } from './toolchain.js';
import { getTarget } from './targets/index.js';

// The README is the contract other packages code against: its examples must run as written.
const pkgDir = join(import.meta.dirname, '..');
const readme = readFileSync(join(pkgDir, 'README.md'), 'utf8');
const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
const work = mkdtempSync(join(tmpdir(), 'rocke-ir-readme-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function load(code: string, name: string): Promise<Record<string, unknown>> {
  const file = join(work, `${name}.ts`);
  // Same public surface as the package entry; resolved to the source so no build is needed.
  writeFileSync(file, code.replace(/from '@rocke\/ir'/g, `from ${JSON.stringify(join(pkgDir, 'src', 'index.ts'))}`));
  return import(file);
}

describe('README examples', () => {
  it('has the building example and the two-target MMA example', () => {
    expect(blocks).toHaveLength(2);
  });

  it('the building example prints a module llvm-as accepts', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    await load(blocks[0]!, 'building');
    const text = String(log.mock.calls[0]?.[0]);
    expect(text).toContain('define amdgpu_kernel void @scale(ptr addrspace(1) noalias %x, i32 %n)');
    await compile(text, getTarget('gfx950'));
  });

  it('the MMA example lowers one algorithm to gfx950, gfx942 and sm_90', async () => {
    const mod = await load(`${blocks[1]!}\nexport { mmaTile };\n`, 'mma');
    const mmaTile = mod.mmaTile as (t: ReturnType<typeof getTarget>) => string;
    for (const name of ['gfx950', 'gfx942', 'sm_90']) {
      const t = getTarget(name);
      const r = await compile(mmaTile(t), t);
      if (r.vendor === 'nvidia') expect(r.ptx).toContain('mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32');
      else expect(r.object.length).toBeGreaterThan(1000);
    }
  });
});
