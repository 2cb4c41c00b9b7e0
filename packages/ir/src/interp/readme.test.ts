import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

// The Interpreter section of the README must run as written.
const pkgDir = join(import.meta.dirname, '..', '..');
const readme = readFileSync(join(pkgDir, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Interpreter'));
const example = /```js\n([\s\S]*?)```/.exec(section)?.[1];
const work = mkdtempSync(join(tmpdir(), 'rocke-ir-interp-readme-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function run(code: string, name: string): Promise<unknown[]> {
  const file = join(work, `${name}.ts`);
  writeFileSync(file, code.replace(/from '@rocke\/ir'/g, `from ${JSON.stringify(join(pkgDir, 'src', 'index.ts'))}`));
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    await import(file);
    return log.mock.calls[0] ?? [];
  } finally {
    log.mockRestore();
  }
}

describe('README Interpreter section', () => {
  it('runs its example and prints what the comment says', async () => {
    expect(example).toBeDefined();
    expect(await run(example!, 'example')).toEqual([255, 0, 1, 256]);
  });

  it('without the barrier the example fails with the race the README quotes', async () => {
    const quoted = /throws `([^`]+)`/.exec(section.replace(/\n/g, ' '))?.[1];
    expect(quoted).toBeDefined();
    await expect(run(example!.replace('t.barrier(b);\n', ''), 'nobarrier')).rejects.toThrow(quoted!);
  });
});
