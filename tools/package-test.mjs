#!/usr/bin/env node
// The packages as a user gets them from npm. Packs every package (with the dists and the
// hip-runtime prebuild already built), then:
//   - per tarball: publint --strict, attw (on the packed .tgz: what `attw --pack` runs) and a
//     look at its file list (nothing that only the repository needs);
//   - installs the seven tarballs into a temporary project outside the repository with no C++
//     compiler reachable (CC/CXX and npm's node-gyp point at missing files), then uses them as an
//     app does: an ESM import, a CJS require, `tsc --noEmit` with skipLibCheck false and no
//     @types/node, the rocke CLI (--help, plan, a one-problem compile-all, and bench, which needs
//     a GPU and must say so in one line), the example under each README's `## Install`, and,
//     with the prebuild hidden, a failing source build that leaves the install working.
// Third-party dependencies come from the npm cache when they are there (--prefer-offline).
//   node tools/package-test.mjs [--report FILE] [--keep]
// Prints one line per check and `packages: N passed, N failed`; --report writes {passed, failed, sizes}.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const args = process.argv.slice(2);
const reportFile = args.includes('--report') ? args[args.indexOf('--report') + 1] : undefined;
const packageDirs = readdirSync(join(root, 'packages')).filter((p) => existsSync(join(root, 'packages', p, 'package.json'))).sort();
const results = [];

function record(name, ok, detail = '') {
  results.push({ name, ok });
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail && !ok ? `\n${detail.trimEnd().replace(/^/gm, '     ')}` : ''}`);
}

/** Runs a command to completion without a shell; resolves with its status and combined output. */
function run(command, commandArgs, options = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, commandArgs, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', (status) => resolve({ status, output }));
    child.on('error', (error) => resolve({ status: -1, output: String(error) }));
  });
}

/** Paths a published tarball must not hold: sources, maps, tests and their data, build leftovers. */
const unwanted = [/^src\//, /\.map$/, /\.test\./, /goldens\.json$/, /selftest/, /^dist\/cli\.cjs$/, /^build\//, /node_modules\//, /\.o$/];

function packAll(dest) {
  const packed = [];
  for (const dir of packageDirs) {
    const out = spawnSync('npm', ['pack', '--json', '--pack-destination', dest], { cwd: join(root, 'packages', dir), encoding: 'utf8' });
    if (out.status !== 0) {
      record(`pack ${dir}`, false, out.stderr);
      continue;
    }
    const [info] = JSON.parse(out.stdout);
    const paths = info.files.map((f) => f.path);
    const bad = paths.filter((p) => unwanted.some((re) => re.test(p)));
    const missing = ['LICENSE', 'README.md', 'dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts'].filter((p) => !paths.includes(p));
    if (dir === 'hip-runtime' && !paths.some((p) => p.startsWith('prebuilds/linux-x64/'))) missing.push('prebuilds/linux-x64/*.node');
    // The workspace-only `@rocke/source` export condition points at src/, which is not packed (tools/pack-exports.mjs strips it).
    const manifest = spawnSync('tar', ['-xOzf', join(dest, info.filename), 'package/package.json'], { encoding: 'utf8' }).stdout;
    if (manifest.includes('@rocke/source')) bad.push('package.json exports name the @rocke/source condition');
    record(`tarball contents ${info.name}`, bad.length === 0 && missing.length === 0, [bad.length ? `unwanted: ${bad.join(', ')}` : '', missing.length ? `missing: ${missing.join(', ')}` : ''].join('\n'));
    packed.push({ dir, name: info.name, tarball: join(dest, info.filename), size: info.size, unpackedSize: info.unpackedSize, files: info.entryCount });
  }
  return packed;
}

async function lintTarballs(packed) {
  const jobs = packed.flatMap((p) => [
    { name: `publint --strict ${p.name}`, command: bin('publint'), args: ['run', '--strict', p.tarball] },
    { name: `attw ${p.name}`, command: bin('attw'), args: [p.tarball, '--format', 'ascii', '--no-color'] },
  ]);
  const outcomes = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < jobs.length; i = next++) outcomes[i] = await run(jobs[i].command, jobs[i].args, { cwd: root });
  };
  await Promise.all([worker(), worker()]);
  jobs.forEach((job, i) => {
    const { status, output } = outcomes[i];
    // publint exits 0 on suggestions; --strict turns warnings into errors, and a suggestion is still worth fixing here.
    const clean = status === 0 && !/Suggestions:|Warnings:|Errors:/.test(output);
    record(job.name, clean, output);
  });
}

/** The app: one ESM and one CJS module using every package, run by node and checked by tsc. */
const esmApp = `import * as ir from '@rocke/ir';
import * as reference from '@rocke/reference';
import * as elfPrune from '@rocke/elf-prune';
import * as hip from '@rocke/hip-runtime';
import * as conv from '@rocke/conv-direct';
import * as splitReduce from '@rocke/split-reduce';
import * as pipeline from '@rocke/pipeline';

const versions: string[] = [ir.VERSION, reference.VERSION, elfPrune.VERSION, hip.VERSION, conv.VERSION, splitReduce.VERSION, pipeline.VERSION];
const parsed = conv.parseProblem({ n: 1, c: 64, h: 14, w: 14, k: 64, dtype: 'bf16' });
const packed: Uint8Array = hip.packKernargs([{ name: 'n', type: 'i32' }], [7]).bytes;
const probe = hip.probeRuntime();
console.log(JSON.stringify({
  versions, problem: parsed.ok, kernargBytes: packed.length, f32: ir.typeToString(ir.f32),
  addonAbi: hip.getBinding().abiVersion, addonFailures: probe.attempts.filter((a) => a.backend === 'addon').length,
}));
`;
const cjsApp = `import ir = require('@rocke/ir');
import reference = require('@rocke/reference');
import elfPrune = require('@rocke/elf-prune');
import hip = require('@rocke/hip-runtime');
import conv = require('@rocke/conv-direct');
import splitReduce = require('@rocke/split-reduce');
import pipeline = require('@rocke/pipeline');

const versions: string[] = [ir.VERSION, reference.VERSION, elfPrune.VERSION, hip.VERSION, conv.VERSION, splitReduce.VERSION, pipeline.VERSION];
console.log(JSON.stringify({ versions, problem: conv.parseProblem({ n: 1, c: 8, h: 8, w: 8, k: 8, dtype: 'fp16' }).ok }));
`;
// No @types/node: the lib is the language plus the DOM's globals (console, URL, AbortSignal),
// which is what a browser-less app without Node's types sees by default.
const tsconfig = {
  compilerOptions: {
    module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2023', 'dom'], types: [],
    strict: true, skipLibCheck: false, noEmit: true,
  },
  files: ['app.mts', 'app.cts'],
};

/** Environment with no C++ compiler and no node-gyp: a source build of the addon cannot happen. */
function noCompilerEnv() {
  const env = { ...process.env, CC: '/nonexistent/cc', CXX: '/nonexistent/c++', npm_config_node_gyp: '/nonexistent/node-gyp.js' };
  for (const key of Object.keys(env)) if (/^(npm_|NODE_OPTIONS$|INIT_CWD$)/i.test(key) && key !== 'npm_config_node_gyp') delete env[key];
  return env;
}

async function installAndUse(packed, app) {
  const env = noCompilerEnv();
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'rocke-install-test', private: true }, null, 2));
  const install = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...packed.map((p) => p.tarball)], { cwd: app, env });
  record('npm install of the seven tarballs (no C++ compiler)', install.status === 0, install.output);
  if (install.status !== 0) return;
  const modules = join(app, 'node_modules');
  const strays = ['@rocke/hip-runtime/build', 'node-gyp', '@rocke/node-addon-api'].filter((p) => existsSync(join(modules, p)));
  record('no source build and no node-gyp installed', strays.length === 0, `present: ${strays.join(', ')}`);

  writeFileSync(join(app, 'app.mts'), esmApp);
  writeFileSync(join(app, 'app.cts'), cjsApp);
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  const tsc = await run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: app, env });
  record('tsc --noEmit, skipLibCheck false, no @types/node', tsc.status === 0 && !existsSync(join(modules, '@types', 'node')), tsc.output);
  // Node runs the same modules with the types stripped by esbuild (the one transform the repo already has).
  const esbuild = bin('esbuild');
  for (const [file, name] of [['app.mts', 'ESM import'], ['app.cts', 'CJS require']]) {
    const out = file.replace(/\.(m|c)ts$/, '.$1js');
    const strip = await run(esbuild, [file, `--outfile=${out}`, '--log-level=warning'], { cwd: app, env });
    const use = strip.status === 0 ? await run(process.execPath, [out], { cwd: app, env }) : strip;
    const ok = use.status === 0 && !/"addonFailures":[1-9]/.test(use.output) && /"versions":\["\d/.test(use.output);
    record(`${name} of every package${file === 'app.mts' ? ' (the prebuilt addon loads)' : ''}`, ok, use.output);
  }
  await useCli(app, env);
  await runReadmeExamples(app, env);
  await withoutAddon(app, env);
}

/**
 * Where the addon cannot load (no prebuild for the platform and no compiler): a source build fails
 * without failing the install, plan still works, and bench says why in one message.
 */
async function withoutAddon(app, env) {
  const hip = join(app, 'node_modules', '@rocke', 'hip-runtime');
  const rocke = join(app, 'node_modules', '.bin', 'rocke');
  const problem = ['--n', '1', '--c', '64', '--h', '14', '--w', '14', '--k', '64', '--dtype', 'bf16'];
  renameSync(join(hip, 'prebuilds'), join(hip, 'prebuilds.hidden'));
  try {
    const rebuild = await run('npm', ['rebuild', '@rocke/hip-runtime'], { cwd: app, env });
    const built = existsSync(join(hip, 'build', 'Release', 'rocke_hip_runtime.node'));
    record('without a prebuild or a compiler, npm rebuild @rocke/hip-runtime still succeeds', rebuild.status === 0 && !built, rebuild.output);
    const plan = await run(rocke, ['plan', ...problem, '--target', 'sm_90'], { cwd: app, env });
    record('rocke plan without the addon', plan.status === 0, plan.output);
    const bench = await run(rocke, ['bench', ...problem, '--target', 'sm_90'], { cwd: app, env });
    const clear = bench.status === 1 && /native addon could not be loaded/.test(bench.output) && !/\n\s+at /.test(bench.output);
    record('rocke bench without the addon: one message saying why', clear, bench.output);
  } finally {
    rmSync(join(hip, 'build'), { recursive: true, force: true });
    renameSync(join(hip, 'prebuilds.hidden'), join(hip, 'prebuilds'));
  }
}

/** The example under each README's `## Install` (the first js block), run as the app's own module. */
async function runReadmeExamples(app, env) {
  const codeObject = firstElf(join(app, 'kernel-cache'));
  for (const dir of packageDirs) {
    const readme = readFileSync(join(root, 'packages', dir, 'README.md'), 'utf8');
    const install = readme.indexOf('\n## Install\n');
    if (install < 0 || readme.lastIndexOf('\n## ', install - 1) >= 0) {
      record(`README of ${dir}: ## Install is its first section`, false);
      continue;
    }
    const next = readme.indexOf('\n## ', install + 1);
    const example = /```js\n([\s\S]*?)```/.exec(readme.slice(install, next < 0 ? undefined : next));
    if (!example) continue; // pipeline's example is the CLI, run above
    const file = join(app, `readme-${dir}.mjs`);
    writeFileSync(file, example[1]);
    const result = await run(process.execPath, [file, ...(dir === 'elf-prune' && codeObject ? [codeObject] : [])], { cwd: app, env });
    record(`README example of ${dir}`, result.status === 0, result.output);
  }
}

/** A compiled code object from compile-all's cache (the elf-prune example reads one). */
function firstElf(dir) {
  if (!existsSync(dir)) return undefined;
  for (const entry of readdirSync(dir, { recursive: true })) {
    const path = join(dir, entry);
    try {
      if (readFileSync(path).subarray(0, 4).toString('latin1') === '\x7fELF') return path;
    } catch {
      // a directory
    }
  }
  return undefined;
}

async function useCli(app, env) {
  const rocke = join(app, 'node_modules', '.bin', 'rocke');
  const problem = ['--n', '1', '--c', '64', '--h', '14', '--w', '14', '--k', '64', '--dtype', 'bf16'];
  const cache = ['--cache-dir', join(app, 'kernel-cache')];
  const help = await run(rocke, ['--help'], { cwd: app, env });
  record('rocke --help', help.status === 0 && /usage: rocke/.test(help.output), help.output);
  const plan = await run(rocke, ['plan', ...problem, '--target', 'gfx950'], { cwd: app, env });
  record('rocke plan', plan.status === 0, plan.output);
  const compile = await run(rocke, ['compile-all', ...problem, '--target', 'gfx950', '--cap', '1', '--quiet', ...cache], { cwd: app, env });
  record('rocke compile-all (one problem, --cap 1)', compile.status === 0, compile.output);
  // bench needs a GPU: without one it must fail with a short message, not a stack trace.
  const bench = await run(rocke, ['bench', ...problem, '--target', 'sm_90', ...cache], { cwd: app, env });
  const gpuPresent = existsSync('/dev/nvidiactl') || existsSync('/dev/kfd');
  record('rocke bench without a GPU: a clear message', gpuPresent || (bench.status === 1 && !/\n\s+at /.test(bench.output)), bench.output);
}

const work = mkdtempSync(join(tmpdir(), 'rocke-package-test-'));
try {
  const tarballs = join(work, 'tarballs');
  const app = join(work, 'app');
  mkdirSync(tarballs);
  mkdirSync(app);
  const packed = packAll(tarballs);
  console.log(packed.map((p) => `     ${p.name}: ${p.files} files, ${(p.size / 1024).toFixed(1)} KiB packed, ${(p.unpackedSize / 1024).toFixed(1)} KiB unpacked`).join('\n'));
  await lintTarballs(packed);
  if (packed.length === packageDirs.length) await installAndUse(packed, app);
  const passed = results.filter((r) => r.ok).length;
  const failed = results.length - passed;
  console.log(`packages: ${passed} passed, ${failed} failed`);
  if (reportFile) writeFileSync(reportFile, JSON.stringify({ passed, failed, sizes: packed.map(({ tarball, ...rest }) => rest) }, null, 2));
  process.exitCode = failed === 0 ? 0 : 1;
} finally {
  if (args.includes('--keep')) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
