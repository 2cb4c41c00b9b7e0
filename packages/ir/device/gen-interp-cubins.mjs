#!/usr/bin/env node
// Compiles the kernels of interp-kernels.mjs for sm_90 (opt + llc + ptxas, here: no GPU needed)
// into device/interp/<name>.cubin (+ .ptx for reading) and records the SHA-256 of each kernel's IR
// text, so interp-vs-native.mjs can check that the cubin it runs came from the IR it interprets.
//   (cd packages/ir && npx tsup) && node packages/ir/device/gen-interp-cubins.mjs [name ...]
// With names, only those kernels are rebuilt and the manifest keeps the other entries as they are.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ir from '../dist/index.js';
import { interpKernels } from './interp-kernels.mjs';

const out = join(import.meta.dirname, 'interp');
mkdirSync(out, { recursive: true });
const only = process.argv.slice(2);
const kernels = interpKernels(ir);
for (const n of only) if (!kernels.some((k) => k.name === n)) throw new Error(`no kernel ${n} in interp-kernels.mjs`);
const manifestPath = join(out, 'manifest.json');
const old = only.length > 0 && existsSync(manifestPath) ? JSON.parse(readFileSync(manifestPath, 'utf8')) : {};
const manifest = {};
for (const k of kernels) {
  if (only.length > 0 && !only.includes(k.name)) {
    if (old[k.name]) manifest[k.name] = old[k.name];
    continue;
  }
  const text = ir.printModule(k.module);
  const r = await ir.compile(text, ir.sm_90);
  if (!r.cubin) throw new Error('ptxas was not found: cannot write a cubin');
  writeFileSync(join(out, `${k.name}.cubin`), r.cubin);
  writeFileSync(join(out, `${k.name}.ptx`), r.ptx);
  manifest[k.name] = { irSha256: createHash('sha256').update(text).digest('hex'), cubinBytes: r.cubin.length };
  console.log(`wrote device/interp/${k.name}.cubin (${r.cubin.length} bytes)`);
}
writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
