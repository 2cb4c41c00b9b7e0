// Test helper: bundles a TypeScript entry of this package into one .mjs file so plain `node`
// child processes can run the real source (vitest transforms TS in-process only).
import { build } from 'esbuild';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Bundles `entry` (absolute path) to a temp .mjs file and returns its path. */
export async function bundleForNode(entry: string, define: Record<string, string> = {}): Promise<string> {
  const outfile = join(mkdtempSync(join(tmpdir(), 'rocke-bundle-')), 'bundle.mjs');
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['@rocke/source'],
    define: { __PACKAGE_VERSION__: '"test"', ...define },
    logLevel: 'silent',
  });
  return outfile;
}
