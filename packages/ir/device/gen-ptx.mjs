#!/usr/bin/env node
// Regenerates device/ptx/*.ptx from src/test-kernels.ts for sm_90 (needs LLVM 22 here; the device
// machine only needs CUDA). Sources are transpiled with the repo's TypeScript into a temp dir.
//   node packages/ir/device/gen-ptx.mjs
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

const here = import.meta.dirname;
const src = join(here, '..', 'src');
const out = mkdtempSync(join(tmpdir(), 'rocke-ir-gen-'));
try {
  const walk = (d) => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]));
  for (const file of walk(src)) {
    if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue;
    const js = ts.transpileModule(readFileSync(file, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    }).outputText;
    const dest = join(out, relative(src, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(dest), { recursive: true });
    writeFileSync(dest, js.replaceAll('__PACKAGE_VERSION__', '"device"'));
  }
  writeFileSync(join(out, 'package.json'), '{"type":"module"}\n');
  const ir = await import(pathToFileURL(join(out, 'index.js')).href);
  const kernels = await import(pathToFileURL(join(out, 'test-kernels.js')).href);
  const t = ir.sm_90;
  const modules = { axpy: kernels.axpyKernel(t), lds_reverse: kernels.ldsReverseKernel(t) };
  for (const a of t.atoms) modules[`mma_${a.name.replace('.', '_')}`] = kernels.mmaKernel(t, a);
  // wgmma GEMMs (host.cpp launches them by these names): K core matrices adjacent, row groups adjacent, padded strides.
  for (const g of [
    { n: 128, k: 32, dtype: 'bf16', a: { lbo: 128, sbo: 512 }, b: { lbo: 128, sbo: 512 } },
    { n: 112, k: 32, dtype: 'f16', a: { lbo: 1024, sbo: 128 }, b: { lbo: 14 * 128, sbo: 128 } },
    { n: 256, k: 32, dtype: 'bf16', a: { lbo: 128, sbo: 560 }, b: { lbo: 256, sbo: 1040 } },
  ]) modules[`wgmma_m64n${g.n}k${g.k}_${g.dtype}`] = kernels.wgmmaGemmKernel(t, g);
  mkdirSync(join(here, 'ptx'), { recursive: true });
  for (const [name, m] of Object.entries(modules)) {
    const r = await ir.compile(ir.printModule(m), t, { ptxas: false });
    writeFileSync(join(here, 'ptx', `${name}.ptx`), r.ptx);
    console.log(`wrote device/ptx/${name}.ptx`);
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
