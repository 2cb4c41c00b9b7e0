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
  mkdirSync(join(here, 'ptx'), { recursive: true });
  for (const [name, m] of Object.entries(modules)) {
    const r = await ir.compile(ir.printModule(m), t, { ptxas: false });
    writeFileSync(join(here, 'ptx', `${name}.ptx`), r.ptx);
    console.log(`wrote device/ptx/${name}.ptx`);
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
