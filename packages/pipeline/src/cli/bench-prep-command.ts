import { resolve } from 'node:path';
import type { CliDeps } from './deps.js';
import { UsageError, type CliIo } from '../io.js';
import { readTextInput } from './files.js';
import { readSuite } from './problem-input.js';
import { cacheFrom, COMMON_OPTIONS, parse, parseArgs, positiveInt, printJson, targetsFrom } from './args.js';
import { compileProgress } from './progress.js';
import { formatBytes, formatDuration, formatTable } from '../table.js';
import { benchPrep } from '../bench/prep.js';
import { parseEpilogueShape } from '../bench/epilogue.js';
import { cliOp } from './wiring.js';

export const BENCH_PREP_USAGE = `rocke bench-prep --suite SUITE.json --out DIR [--target sm_90] [--cap ${cliOp.defaultCap}] [--variant V[,V]] [--epilogue act[:b32|:bd][:res]] [--jobs N] [--cache-dir DIR] [--json]
  For a GPU machine without LLVM: compiles each shape's candidates (dense, with pointwise first for
  unpadded 1x1; split_c on small maps; grouped, and depthwise for groups = C; --variant keeps only
  those variants), ordered and capped
  per shape, through the compile cache,
  plus the split-reduce helpers, and writes DIR/bench-manifest.json and DIR/blobs/ (code only,
  deduplicated). Then, on the GPU: rocke bench --suite SUITE.json --cache-dir DIR --verify --vs-cudnn
  --epilogue (e.g. silu:b32:res = silu, fp32 bias, residual) compiles every candidate fused with it;
  the bench of DIR then times, verifies and compares the fused kernels (cuDNN + PyTorch's ops).
  A shape whose selection throws is noted and skipped; the rest is prepared, then exit 1 naming it.`;

/** `rocke bench-prep`: compiles a suite's candidates and writes a bench manifest (`deps` gives compiler and pruner). */
export async function benchPrepCommand(argv: readonly string[], io: CliIo, deps: Pick<CliDeps, 'compiler' | 'pruner' | 'planner'>): Promise<number> {
  const { values } = parse('bench-prep', () =>
    parseArgs({ args: [...argv], options: { ...COMMON_OPTIONS, suite: { type: 'string' }, out: { type: 'string' }, target: { type: 'string' }, cap: { type: 'string' }, variant: { type: 'string', multiple: true }, jobs: { type: 'string' }, quiet: { type: 'boolean' }, epilogue: { type: 'string' } }, strict: true, allowPositionals: false }),
  );
  if (values.help) {
    io.stdout(`${BENCH_PREP_USAGE}\n`);
    return 0;
  }
  if (!values.suite) throw new UsageError('bench-prep needs --suite SUITE.json');
  if (!values.out) throw new UsageError('bench-prep needs --out DIR');
  const problems = readSuite(readTextInput(io, '--suite', values.suite));
  const target = targetsFrom(values.target)?.[0] ?? 'sm_90';
  const variants = (values.variant ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  const unknown = variants.filter((v) => !(cliOp.variants as readonly string[]).includes(v));
  if (unknown.length) throw new UsageError(`--variant ${unknown.join(',')}: not a variant (${cliOp.variants.join(', ')})`);
  const epilogue = values.epilogue === undefined ? undefined : parseEpilogueShape(values.epilogue);
  if (typeof epilogue === 'string') throw new UsageError(`--epilogue ${values.epilogue}: ${epilogue}`);
  const progress = values.quiet ? undefined : compileProgress({ write: io.stderr, isTTY: io.stderrIsTTY, columns: io.columns });
  const planner = deps.planner();
  const result = await benchPrep({
    planner,
    problems,
    target,
    outDir: resolve(io.cwd, values.out),
    cache: cacheFrom(values, io),
    compiler: deps.compiler(),
    pruner: deps.pruner(),
    cap: positiveInt('cap', values.cap, planner.defaultCap),
    ...(variants.length ? { variants } : {}),
    ...(epilogue ? { epilogue } : {}),
    ...(values.jobs ? { jobs: positiveInt('jobs', values.jobs, 1) } : {}),
    ...(progress ? { progress } : {}),
    ...(io.signal ? { signal: io.signal } : {}),
  });
  progress?.finish();
  const { manifest, compile } = result;
  if (values.json) printJson(io, { manifest, compile: { ...compile }, blobs: result.blobs, bytes: result.bytes, failedShapes: result.failedShapes });
  else {
    const rows = manifest.shapes.map((s) => [s.name, s.cls ?? '-', Object.entries(s.available).map(([v, n]) => `${v} ${n}`).join(', '), s.candidates.length, s.notes.length]);
    io.stdout(formatTable(['shape', 'class', 'valid', 'compiled', 'notes'], rows, ['left', 'left', 'left', 'right', 'right']));
    for (const s of manifest.shapes) for (const n of s.notes) io.stdout(`  ${s.name}: ${n}\n`);
    io.stdout(
      `compile: ${compile.total} entries (${compile.compiled} compiled, ${compile.rebuilt} rebuilt, ${compile.cached} cached, ${compile.failed.length} failed, ${compile.pruned.length} pruned) in ${formatDuration(compile.durationMs)}\n` +
        `${values.out}: ${result.blobs} code blobs, ${formatBytes(result.bytes)}, ${manifest.helpers.length} split-reduce helpers\n`,
    );
  }
  for (const f of result.failedShapes) io.stderr(`rocke bench-prep: ${f.name}: ${f.reasons.join('; ')}\n`);
  if (result.failedShapes.length) io.stderr(`rocke bench-prep: selection failed for ${result.failedShapes.length} shape(s): ${result.failedShapes.map((f) => f.name).join(', ')} (the other shapes were prepared)\n`);
  return compile.failed.length || result.failedShapes.length ? 1 : 0;
}
