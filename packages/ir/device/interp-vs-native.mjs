#!/usr/bin/env node
// Runs the same small sm_90 kernels natively (committed cubins from gen-interp-cubins.mjs) and
// through the @rocke/ir interpreter, and compares every output buffer bit for bit.
// From the repository root on the GPU machine (needs packages/ir/dist and packages/hip-runtime/dist
// + its native addon built; no npm install):
//   node packages/ir/device/interp-vs-native.mjs
// Prints one IDENTICAL / DIFFERENT line per kernel, then ALL IDENTICAL or N DIFFERENT (exit 1).
// `--dry-run` uses @rocke/hip-runtime's fake binding (kernels do not run, so every kernel reports
// DIFFERENT): it checks the script's plumbing on a machine without a GPU.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFakeBinding, openDevice } from '../../hip-runtime/dist/index.js';
import * as ir from '../dist/index.js';
import { interpKernels } from './interp-kernels.mjs';

const dir = join(import.meta.dirname, 'interp');
const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
const dryRun = process.argv.includes('--dry-run');
const names = interpKernels(ir).map((k) => k.name);
const device = openDevice({ backend: 'cuda', index: 0, ...(dryRun ? { binding: createFakeBinding({ kernels: Object.fromEntries(names.map((n) => [n, null])) }) } : {}) });
console.log(`device: ${device.info.name} (${device.info.arch})`);
let different = 0;

function compare(idx, native, interp) {
  const a = new Uint8Array(native.buffer, native.byteOffset, native.byteLength);
  const b = new Uint8Array(interp.buffer, interp.byteOffset, interp.byteLength);
  if (a.length === b.length && a.every((x, i) => x === b[i])) return undefined;
  let bad = 0;
  let first = -1;
  for (let i = 0; i < native.length; i++) {
    if (!Object.is(native[i], interp[i]) && !(Number.isNaN(native[i]) && Number.isNaN(interp[i]))) {
      bad++;
      if (first < 0) first = i;
    }
  }
  return `output arg ${idx}: ${bad}/${native.length} elements differ${first >= 0 ? ` (first at ${first}: native ${native[first]}, interpreted ${interp[first]})` : ' (NaN payloads only)'}`;
}

for (const k of interpKernels(ir)) {
  const text = ir.printModule(k.module);
  const sha = createHash('sha256').update(text).digest('hex');
  if (manifest[k.name]?.irSha256 !== sha) {
    console.log(`DIFFERENT ${k.name}: the IR no longer matches the committed cubin (rerun gen-interp-cubins.mjs)`);
    different++;
    continue;
  }
  try {
    const inputs = k.inputs();
    const interpArgs = inputs.map((x) => (ArrayBuffer.isView(x) ? x.slice() : x));
    const res = ir.interpret(k.module, k.name, { target: ir.sm_90, grid: k.grid, block: k.block, args: interpArgs });
    const mod = device.loadModule(readFileSync(join(dir, `${k.name}.cubin`)));
    const fn = mod.getFunction(k.name, k.signature);
    const bufs = inputs.map((x) => (ArrayBuffer.isView(x) ? device.upload(x) : x));
    fn.launch(k.grid, k.block, bufs);
    device.synchronize();
    const diffs = [];
    for (const idx of k.outputs) {
      const native = bufs[idx].read(new inputs[idx].constructor(inputs[idx].length));
      const d = compare(idx, native, interpArgs[idx]);
      if (d) diffs.push(d);
    }
    for (const b of bufs) if (typeof b === 'object') b.free();
    const outBytes = k.outputs.reduce((s, i) => s + inputs[i].byteLength, 0);
    if (diffs.length === 0) console.log(`IDENTICAL ${k.name}: ${k.outputs.length} output buffer(s), ${outBytes} bytes; interpreter ${res.instructions} instructions in ${res.seconds.toFixed(3)} s`);
    else {
      different++;
      console.log(`DIFFERENT ${k.name}: ${diffs.join('; ')}`);
    }
  } catch (e) {
    different++;
    console.log(`DIFFERENT ${k.name}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
  }
}
device.close();
console.log(different === 0 ? 'ALL IDENTICAL' : `${different} DIFFERENT`);
process.exit(different === 0 ? 0 : 1);
