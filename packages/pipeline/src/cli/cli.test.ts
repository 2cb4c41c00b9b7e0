import { spawn, spawnSync } from 'node:child_process';
import { DEFAULT_PROBLEMS } from '@rocke/conv-direct';
import { existsSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { KernelCache } from '../cache/cache.js';
import { recordKey, RecordStore } from '../cache/records.js';
import { problemJson } from '../api/kernel-source.js';
import type { CompileAllReport } from '../compile/compile-all.js';
import { aotCandidates, kernelName, problemCandidates } from '@rocke/conv-direct';
import { compileAll } from '../compile/compile-all.js';
import type { RunRequest } from '../api/run-conv.js';
import type { PlanReport, PlanRow } from './plan-command.js';
import { axpyFamily } from '../compile/axpy-family.js';
import { convDirectFamily } from '@rocke/conv-direct';
import { LlvmToolchain } from '../compile/llvm-toolchain.js';
import { readNpy, writeNpy } from '../npy.js';
import { bundleForNode } from '../testing/bundle.js';
import { cliHarness } from '../testing/cli-harness.js';

const SMALL = ['--n', '1', '--c', '512', '--h', '7', '--w', '7', '--k', '512', '--pad', '1', '--dtype', 'bf16'];

describe('rocke CLI: usage and exit codes', () => {
  const { run } = cliHarness();

  it('prints usage with every command on --help (exit 0)', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    for (const cmd of ['compile-all', 'plan', 'bench-prep', 'bench', 'run', 'report', 'cache ls', 'cache verify', 'cache prune', 'cache gc']) expect(r.stdout).toContain(`rocke ${cmd}`);
    expect((await run(['plan', '--help'])).stdout).toMatch(/^rocke plan/);
    expect((await run(['bench-prep', '--help'])).stdout).toMatch(/^rocke bench-prep/);
    expect(await run(['bench-prep', '--out', 'x'])).toMatchObject({ code: 2, stderr: "rocke: bench-prep needs --suite SUITE.json (rocke --help for usage)\n" });
  });

  it('exits 2 with a clear message for no command, an unknown command, an unknown flag', async () => {
    const none = await run([]);
    expect([none.code, none.stderr]).toEqual([2, "rocke: no command given (rocke --help for usage)\n"]);
    const bogus = await run(['frobnicate']);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain("unknown command 'frobnicate'");
    const flag = await run(['compile-all', '--family', 'axpy', '--colour']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/compile-all: Unknown option '--colour'/);
    expect(flag.stdout).toBe('');
  });

  it('rejects bad targets, families, job counts and missing defaults', async () => {
    expect((await run(['compile-all', '--family', 'axpy', '--target', 'gfx90a'])).stderr).toContain("unknown target 'gfx90a' (known: gfx950, gfx942, sm_90)");
    expect((await run(['compile-all', '--family', 'nope'])).stderr).toContain("unknown family 'nope' (known: direct_fwd, direct_fwd_helper, axpy)");
    expect((await run(['compile-all', '--family', 'axpy', '--jobs', '0'])).stderr).toContain("--jobs must be a positive integer (got '0')");
    const noDefault = await run(['compile-all'], { defaultFamilyNames: [] });
    expect(noDefault.code).toBe(2);
    expect(noDefault.stderr).toContain('no default kernel families are wired into this build; choose one with --family (known: direct_fwd, direct_fwd_helper, axpy)');
    expect((await run(['compile-all', '--family', 'axpy', '--limit', 'x'])).stderr).toContain("--limit must be a positive integer (got 'x')");
    expect((await run(['compile-all', '--dtype', 'fp32'])).stderr).toContain("unknown dtype 'fp32' (fp16, bf16)");
  });

  it('explains bad problems (exit 2) given by flags or by a MIOpenDriver line', async () => {
    const zero = await run(['plan', '--n', '0', '--c', '8', '--h', '8', '--w', '8', '--k', '8', '--dtype', 'fp16']);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch(/bad problem: .*N must be >= 1 \(got 0\)/);
    const missing = await run(['plan', '--n', '1', '--c', '8', '--h', '8', '--w', '8', '--dtype', 'fp16']);
    expect(missing.stderr).toContain('bad problem: missing --k');
    const groups = await run(['plan', ...SMALL.slice(0, -2), '--groups', '3', '--dtype', 'bf16']);
    expect(groups.stderr).toContain('groups 3 does not divide C 512');
    const notInt = await run(['plan', '--n', 'one', '--c', '8', '--h', '8', '--w', '8', '--k', '8', '--dtype', 'fp16']);
    expect(notInt.stderr).toContain("N must be an integer (got 'one')");
    const fp32 = await run(['plan', '--miopen', 'conv -n 1 -c 8 -H 8 -W 8 -k 8']);
    expect(fp32.code).toBe(2);
    expect(fp32.stderr).toContain("bad MIOpenDriver command: operation 'conv': fp32 is not supported");
    const both = await run(['plan', '--n', '1', '--miopen', 'convfp16 -n 1 -c 8 -H 8 -W 8 -k 8']);
    expect(both.stderr).toContain('either by --miopen or by flags');
    expect((await run(['plan'])).stderr).toContain('plan needs a problem');
  });
});

describe('rocke plan', () => {
  const { run } = cliHarness();

  it('gives the same problem from flags and from a MIOpenDriver line, as JSON', async () => {
    const a = await run(['plan', ...SMALL, '--json']);
    const b = await run(['plan', '--miopen', 'MIOpenDriver convbfp16 -n 1 -c 512 -H 7 -W 7 -k 512 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -g 1 -F 1', '--json']);
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    const ja = a.json<{ label: string; chosen: { kernelName: string; plan: { launches: { grid: number[] }[] } }; validKernels: string[]; candidates: { valid: number } }>();
    expect(ja.label).toBe('n1h7w7c512k512_r3s3_u1v1_p1q1_g1_bf16');
    expect(b.json<{ label: string }>().label).toBe(ja.label);
    expect(ja.candidates.valid).toBe(ja.validKernels.length);
    expect(ja.validKernels).toContain(ja.chosen.kernelName);
    expect(ja.chosen.plan.launches[0]!.grid[0]).toBeGreaterThan(0);
  });

  it('plans split_c with splits and a workspace, grouped with a merge degree, and honours --kernel', async () => {
    const split = (await run(['plan', ...SMALL, '--variant', 'split_c', '--target', 'sm_90', '--json'])).json<{
      chosen: { plan: { splits: number; workspaceBytes: number; reduce: unknown[] } };
    }>();
    expect(split.chosen.plan.splits).toBeGreaterThan(1);
    // fp32 workspace [splits, N=1, Ho=7, Wo=7, K=512].
    expect(split.chosen.plan.workspaceBytes).toBe(4 * split.chosen.plan.splits * 7 * 7 * 512);
    expect(split.chosen.plan.reduce).toHaveLength(1);
    const grouped = await run(['plan', '--n', '2', '--c', '128', '--h', '28', '--w', '28', '--k', '128', '--groups', '32', '--dtype', 'bf16', '--target', 'sm_90']);
    expect(grouped.code).toBe(0);
    expect(grouped.stdout).toMatch(/variant grouped/);
    expect(grouped.stdout).toMatch(/group_merge \d+/);
    const listing = (await run(['plan', ...SMALL, '--json'])).json<{ validKernels: string[] }>();
    const pick = listing.validKernels[3]!;
    const picked = (await run(['plan', ...SMALL, '--kernel', pick, '--json'])).json<{ chosen: { kernelName: string; rule: string } }>();
    expect(picked.chosen).toMatchObject({ kernelName: pick, rule: '--kernel' });
    const wrong = await run(['plan', ...SMALL, '--kernel', 'no_such_kernel']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('kernel no_such_kernel is not a valid dense/split_c candidate');
    expect((await run(['plan', ...SMALL, '--variant', 'sparse'])).stderr).toContain("unknown variant 'sparse'");
  });
});

describe('rocke plan with a compiled cache', () => {
  const { run, cacheDir } = cliHarness();

  it('ranks the kernels compiled in the cache (pruned ones out), and a tuning record wins over the ranker', async () => {
    const problem = { N: 1, C: 512, H: 7, W: 7, K: 512, R: 3, S: 3, strideH: 1, strideW: 1, padH: 1, padW: 1, dilationH: 1, dilationW: 1, groups: 1, dtype: 'bf16' as const };
    const valid = problemCandidates(problem, 'sm_90', { variant: 'dense' }).valid;
    const picks = [valid[2]!, valid[4]!];
    const cache = new KernelCache(cacheDir);
    const family = convDirectFamily({ dtypes: ['bf16'], variants: ['dense'], grid: () => picks });
    const compiled = await compileAll({ cache, families: [family], compiler: new LlvmToolchain(), targets: ['sm_90'], jobs: 2 });
    expect(compiled.compiled).toBe(2);
    const plan = (await run(['plan', ...SMALL, '--target', 'sm_90', '--json'])).json<PlanReport>();
    expect(plan.cachedKernels).toEqual(picks.map((p) => kernelName(p)));
    expect(plan.chosen?.chosenBy).toBe('ranker');
    expect(picks.map((p) => kernelName(p))).toContain(plan.chosen?.kernelName);
    expect(plan.chosen?.explain.join('\n')).toMatch(/no tuning record .*\nranker: .* of 2 candidate/);
    // Every ranked candidate carries its place, predicted time and the cost terms behind it.
    expect(plan.ranking.map((r) => [r.position, r.kernelName])).toEqual([[1, plan.chosen!.kernelName], [2, expect.any(String)]]);
    expect(plan.ranking[1]!.predictedUs).toBeGreaterThanOrEqual(plan.ranking[0]!.predictedUs);
    expect(Object.keys(plan.ranking[0]!.terms)).toEqual(['mma', 'stage', 'loads', 'lds', 'store', 'dram', 'latency', 'launch']);
    const text = await run(['plan', ...SMALL, '--target', 'sm_90', '--explain']);
    expect(text.stdout).toMatch(/ranking \(the cost model's predicted order, 2 candidates\):\n  #1 rocke_direct_\S+: [\d.]+ us predicted \(mma /);
    const first = plan.chosen!.kernelName;
    const other = picks.map((p) => kernelName(p)).find((k) => k !== first)!;
    const entry = cache.listEntries().entries.find((e) => e.kernelName === first)!;
    cache.putEntry({ ...entry, pruned: { reason: 'spills', detail: 'test' } });
    const after = (await run(['plan', ...SMALL, '--target', 'sm_90', '--json'])).json<PlanReport>();
    expect(after.prunedKernels).toEqual({ [first]: 'spills' });
    expect(after.chosen?.kernelName).toBe(other);
    // A tuning record for this problem on sm_90 is taken as it is (it validates and is compiled).
    const spec = picks.find((p) => kernelName(p) === other)!;
    const key = recordKey('direct_fwd', 'sm_90', problemJson(problem));
    new RecordStore(cacheDir).put({
      schema: 1, key, family: 'direct_fwd', arch: 'sm_90', problem: problemJson(problem),
      choice: { kernelName: other, spec: { ...spec }, launch: {}, code: null }, timeMs: 0.005, runnersUp: [], verified: { mode: 'full' },
      device: { name: 'NVIDIA H200', driver: '13000' }, toolchain: 't', date: '2026-12-03T00:00:00.000Z',
    });
    const recorded = await run(['plan', ...SMALL, '--target', 'sm_90']);
    expect(recorded.stdout).toMatch(/chosen by record: /);
    expect(recorded.stdout).toMatch(/record: .* \(5\.0 us on NVIDIA H200/);
    // Another target's cache is empty: the ranker over every valid candidate.
    const gfx = (await run(['plan', ...SMALL, '--target', 'gfx950', '--json'])).json<PlanReport>();
    expect(gfx.cachedKernels).toEqual([]);
    expect(gfx.chosen?.chosenBy).toBe('ranker');
    expect(gfx.validKernels).toContain(gfx.chosen?.kernelName);
  });

  it('plans every shape of a suite in one process, each with chosenBy', async () => {
    const suite = join(cacheDir, 'suite.json');
    writeFileSync(suite, JSON.stringify({ shapes: [
      { name: 'a', N: 1, C: 256, H: 14, W: 14, K: 256, R: 3, S: 3, stride: 1, pad: 1, dtype: 'bf16' },
      { name: 'g', N: 2, C: 128, H: 28, W: 28, K: 128, R: 3, S: 3, stride: 1, pad: 1, groups: 32, dtype: 'fp16' },
    ] }));
    const r = await run(['plan', '--suite', suite, '--target', 'sm_90', '--json']);
    expect(r.code).toBe(0);
    const { rows } = r.json<{ rows: PlanRow[] }>();
    expect(rows.map((p) => [p.name, p.chosenBy, p.variant])).toEqual([['a', 'ranker', 'dense'], ['g', 'ranker', 'grouped']]);
    expect(rows.every((p) => p.chosen && p.explain.some((l) => l.startsWith('ranker: ')))).toBe(true);
    const text = await run(['plan', '--suite', suite, '--target', 'sm_90']);
    expect(text.stdout).toMatch(/2 of 2 planned \(0 from tuning records\)/);
  });
});

describe('rocke compile-all and cache', () => {
  const { run, cacheDir } = cliHarness();

  it('compiles the axpy family, is incremental, and reports through --json', async () => {
    const first = await run(['compile-all', '--family', 'axpy', '--target', 'gfx950,sm_90', '--jobs', '2', '--json']);
    expect(first.code).toBe(0);
    const r = first.json<CompileAllReport & { cacheDir: string }>();
    expect(r.cacheDir).toBe(cacheDir);
    // gfx950: 2 scales x {None, 3} + scratch + pressure; sm_90: 2 + scratch + pressure.
    expect([r.total, r.compiled, r.cached, r.failed.length]).toEqual([10, 10, 0, 0]);
    // axpy variants are not grouped/split_c: elf-prune never drops them.
    expect(r.prunedByReason).toEqual({});
    expect(r.pruneApplied).toBe(true);
    expect(first.stderr).toMatch(/compile-all: 10 entries\n/);
    expect(first.stderr).toMatch(/compile-all: 10\/10 {2}compiled 10 {2}cached 0 {2}failed 0\n/);

    const second = await run(['compile-all', '--family', 'axpy', '--target', 'gfx950', '--target', 'sm_90', '--quiet']);
    expect(second.code).toBe(0);
    expect(second.stderr).toBe('');
    expect(second.stdout).toMatch(/cached\s+10\s+up to date, skipped/);
    expect(second.stdout).toMatch(/compiled\s+0\s+new entries/);
    const checked = (await run(['compile-all', '--family', 'axpy', '--target', 'gfx950,sm_90', '--check-ir', '--quiet', '--json'])).json<CompileAllReport>();
    expect([checked.cached, checked.rebuilt]).toEqual([10, 0]);
  });

  it('lists, verifies, detects corruption, rebuilds, prunes and collects through the cache commands', async () => {
    const ls = (await run(['cache', 'ls', '--json'])).json<{ entries: { id: string; target: string; kernelName: string }[] }>();
    expect(ls.entries).toHaveLength(10);
    expect((await run(['cache', 'ls', '--target', 'sm_90', '--json'])).json<{ entries: unknown[] }>().entries).toHaveLength(4);
    const table = await run(['cache', 'ls']);
    expect(table.stdout).toMatch(/^id\s+family\s+target\s+variant\s+kernel\s+code\s+size\s+pruned\n/);
    expect(table.stdout).toContain('10 entries in');
    expect((await run(['cache', 'verify'])).code).toBe(0);

    const cache = new KernelCache(cacheDir);
    const victim = cache.getEntry(ls.entries.find((e) => e.kernelName === 'axpy_s2' && e.target === 'gfx950')!.id)!;
    truncateSync(cache.blobPath(victim.code.digest), 7);
    const bad = await run(['cache', 'verify', '--json']);
    expect(bad.code).toBe(1);
    expect(bad.json<{ problems: { kind: string; id: string }[] }>().problems).toEqual([expect.objectContaining({ kind: 'corrupt-blob', id: victim.id, action: 'none' })]);
    const rebuilt = (await run(['compile-all', '--family', 'axpy', '--target', 'gfx950,sm_90', '--quiet', '--json'])).json<CompileAllReport>();
    expect([rebuilt.rebuilt, rebuilt.cached]).toEqual([1, 9]);
    expect(rebuilt.rebuiltByCause).toEqual({ 'corrupt-blob': 1 });
    expect((await run(['cache', 'verify'])).stdout).toContain('all good');

    const pruneAll = await run(['cache', 'prune', '--all']);
    expect(pruneAll.code).toBe(2);
    const dry = (await run(['cache', 'prune', '--all', '--target', 'sm_90', '--dry-run', '--json'])).json<{ removed: unknown[]; kept: number }>();
    expect([dry.removed.length, dry.kept]).toEqual([4, 6]);
    expect((await run(['cache', 'prune', '--all', '--target', 'sm_90'])).stdout).toContain('4 removed, 6 kept');
    const gc = (await run(['cache', 'gc', '--grace-hours', '0', '--json'])).json<{ removedBlobs: string[] }>();
    // Each sm_90 entry had its own IR and cubin blob.
    expect(gc.removedBlobs).toHaveLength(8);
    expect((await run(['cache', 'verify'])).code).toBe(0);
    expect((await run(['cache', 'gc', '--grace-hours', 'soon'])).code).toBe(2);
    expect((await run(['cache'])).stderr).toContain('cache needs a subcommand');
    expect((await run(['cache', 'shrink'])).stderr).toContain("unknown cache subcommand 'shrink'");
  });

  it('compiles the built-in problem set for gfx950 by default: selection, kept kernels with their facts, summary', async () => {
    const { run: runP } = cliHarness();
    const r = await runP(['compile-all', '--cap', '2', '--quiet']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('compile-all: built-in problem set for gfx950, at most 2 candidates per shape (--grid aot: the full grid)');
    // The selection: each shape's apt variants with conv-direct's valid counts and the cap's share.
    for (const p of DEFAULT_PROBLEMS) {
      for (const v of p.problem.groups > 1 ? (['grouped'] as const) : (['dense', 'split_c'] as const)) {
        const valid = problemCandidates(p.problem, 'gfx950', { variant: v }).valid.length;
        const share = p.problem.groups > 1 ? 2 : 1;
        expect(r.stdout).toMatch(new RegExp(`^${p.name}\\s+${p.cls}\\s+gfx950\\s+\\S+_${p.problem.dtype}\\s+${v}\\s+${valid}\\s+\\d+\\s+${share}$`, 'm'));
      }
    }
    // The kept table: a row per kept kernel with registers, LDS, occupancy and spills, then the summary.
    const json = (await runP(['compile-all', '--cap', '2', '--quiet', '--json'])).json<
      CompileAllReport & { grid: string; targets: string[]; problems: { name: string }[]; kept: { kernelName: string; family: string; vgpr: number; ldsBytes: number; occupancy: string; spills: string; shapes: string[] }[] }
    >();
    expect([json.grid, json.targets, json.problems.map((p) => p.name)]).toEqual(['problems', ['gfx950'], DEFAULT_PROBLEMS.map((p) => p.name)]);
    expect([json.compiled, json.cached, json.failed.length]).toEqual([0, json.total, 0]);
    expect(json.kept.length + json.pruned.length).toBe(json.total);
    expect(json.kept.filter((k) => k.family === 'direct_fwd_helper')).toHaveLength(4);
    const header = lines.findIndex((l) => /^kernel\s+variant\s+target\s+tile\s+vgpr\s+agpr\s+sgpr\s+lds\s+occupancy\s+spills\s+shapes$/.test(l));
    expect(header).toBeGreaterThan(0);
    expect(lines[header - 1]).toBe(`kept kernels: ${json.kept.length} of ${json.total} built (${json.pruned.length} pruned, 0 failed)`);
    for (const [i, k] of json.kept.entries()) {
      expect(lines[header + 2 + i]!.startsWith(`${k.kernelName} `)).toBe(true);
      expect(k.vgpr).toBeGreaterThan(0);
      expect(k.occupancy).toMatch(/^\d+ waves\/simd \((vgpr|sgpr|lds|waves)\)$/);
      if (k.family === 'direct_fwd') {
        // conv-direct kernels take their LDS at launch: the table shows it, the binary declares none.
        expect(k.ldsBytes).toBeGreaterThan(0);
        expect(k.shapes.length).toBeGreaterThan(0);
      }
    }
    expect(r.stdout).toMatch(new RegExp(`kept\\s+${json.kept.length}\\s+listed above`));
    expect(r.stdout).toMatch(/selected\s+\d+\s+direct_fwd, direct_fwd_helper for gfx950/);
  });

  it('compiles a problem given by a MIOpenDriver line, and the full AOT grid only behind --grid aot', async () => {
    const { run: runQ } = cliHarness();
    const miopen = 'convbfp16 -n 1 -c 512 -H 7 -W 7 -k 512 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -g 1';
    const q = await runQ(['compile-all', '--miopen', miopen, '--target', 'sm_90', '--family', 'direct_fwd', '--variant', 'split_c', '--cap', '2', '--quiet', '--json']);
    expect(q.code).toBe(0);
    const report = q.json<CompileAllReport & { problems: { name: string; variants: { variant: string; selected: number }[] }[]; kept: { variant: string; shapes: string[] }[] }>();
    expect(report.problems).toEqual([expect.objectContaining({ name: 'problem', variants: [expect.objectContaining({ variant: 'split_c', selected: 2 })] })]);
    // The cap counts usable kernels: one that spills is pruned and the next of the ranking compiled in its place.
    expect(report.kept).toHaveLength(2);
    for (const k of report.kept) expect([k.variant, k.shapes]).toEqual(['split_c', ['problem']]);

    const aot = await runQ(['compile-all', '--grid', 'aot', '--target', 'sm_90', '--limit', '1', '--quiet', '--json']);
    expect(aot.code).toBe(0);
    const a = aot.json<CompileAllReport & { grid: string; families: string[]; kept?: unknown }>();
    expect([a.grid, a.families, a.compiled, a.kept]).toEqual(['aot', ['direct_fwd', 'direct_fwd_helper'], 2, undefined]);
    // --limit 1: the AOT family's first candidate (first dtype, dense).
    const first = aotCandidates('sm_90', 'fp16', 'dense').valid[0]!;
    const ls = (await runQ(['cache', 'ls', '--json'])).json<{ entries: { family: string; kernelName: string }[] }>();
    expect(ls.entries.filter((e) => e.family === 'direct_fwd').map((e) => e.kernelName)).toContain(kernelName(first));
    const human = await runQ(['compile-all', '--grid', 'aot', '--target', 'sm_90', '--limit', '1', '--quiet']);
    expect(human.stdout).not.toContain('kept kernels');
    expect(human.stdout).toMatch(/cached\s+2\s+up to date, skipped/);
  });

  it('explains compile-all flag combinations that do not fit (exit 2)', async () => {
    const { run: runE } = cliHarness();
    const cases: [string[], string][] = [
      [['--grid', 'huge'], "unknown --grid 'huge' (problems, aot)"],
      [['--grid', 'aot', ...SMALL], '--grid aot compiles the shape-independent grid: drop the problem flags / --suite / --miopen-file'],
      [['--grid', 'aot', '--cap', '3'], '--cap applies to problem sets'],
      [['--family', 'axpy', ...SMALL], 'problems select direct_fwd kernels: add --family direct_fwd'],
      [['--suite', 'device.json', ...SMALL], 'give problems either by --suite / --miopen-file or by flags / --miopen, not both'],
      [['--suite', 'missing.json'], 'cannot read --suite missing.json: ENOENT'],
      [[...SMALL, '--dtype', 'fp16'], 'a problem has one --dtype'],
      [['--n', '1', '--c', '8', '--h', '8', '--w', '8', '--dtype', 'bf16'], 'bad problem: missing --k'],
      [['--cap', '0'], "--cap must be a positive integer (got '0')"],
      [['--target', 'gfx90a'], "unknown target 'gfx90a'"],
    ];
    for (const [argv, message] of cases) {
      const r = await runE(['compile-all', ...argv]);
      expect([argv.join(' '), r.code]).toEqual([argv.join(' '), 2]);
      expect(r.stderr).toContain(message);
    }
  });

  it('isolates a failing family member, reports it, and exits 1', async () => {
    const { run: run2 } = cliHarness();
    const deps = { families: () => [axpyFamily({ scales: [1], brokenCount: 1, targets: ['sm_90'] })] };
    const r = await run2(['compile-all', '--family', 'axpy', '--target', 'sm_90', '--quiet'], deps);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/failed\s+1\s+see below/);
    expect(r.stdout).toMatch(/failures:\ntarget.*\n-+ .*\nsm_90\s+axpy\/broken\s+axpy_broken_0\s+compile\s+.*kernel\.ll:\d+:\d+: error: /);
    expect(r.stdout).toMatch(/compiled\s+3\s+new entries/);
  });
});

describe('rocke run, report and bench', () => {
  const { run, dir } = cliHarness();

  it('runs a conv on the CPU reference from .npy files and writes y', async () => {
    // x = 1 everywhere, w = 1 everywhere, 3x3 same padding: each output is C times the number of
    // taps inside the image (9 inside, 6 on an edge, 4 in a corner).
    const N = 1, H = 4, W = 5, C = 4, K = 2;
    writeFileSync(join(dir, 'x.npy'), writeNpy({ dtype: 'float16', shape: [N, H, W, C], data: new Uint16Array(N * H * W * C).fill(0x3c00) }));
    writeFileSync(join(dir, 'w.npy'), writeNpy({ dtype: 'float32', shape: [K, 3, 3, C], data: new Float32Array(K * 9 * C).fill(1) }));
    const r = await run(['run', '--x', 'x.npy', '--w', 'w.npy', '--out', 'y.npy', '--device', 'cpu', '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('--w is float32; rounded to fp16');
    expect(r.json<{ problem: { N: number; H: number; W: number; C: number; K: number; padH: number; groups: number; dtype: string } }>().problem).toMatchObject({ N, H, W, C, K, padH: 1, groups: 1, dtype: 'fp16' });
    const y = readNpy(readFileSync(join(dir, 'y.npy')));
    expect(y.dtype).toBe('float16');
    expect(y.shape).toEqual([1, 4, 5, 2]);
    const at = (h: number, w: number, k: number) => y.data[(h * 5 + w) * 2 + k];
    // fp16 bits: 16 = 0x4c00, 24 = 0x4e00, 36 = 0x5080.
    expect([at(0, 0, 0), at(0, 2, 1), at(1, 1, 0), at(2, 3, 1), at(3, 4, 0)]).toEqual([0x4c00, 0x4e00, 0x5080, 0x5080, 0x4c00]);
    // pad 0, stride 2 from flags: a 1x2 output where every tap is inside.
    const r2 = await run(['run', '--x', 'x.npy', '--w', 'w.npy', '--out', 'y2.npy', '--device', 'cpu', '--pad', '0', '--stride', '2']);
    expect(r2.code).toBe(0);
    const y2 = readNpy(readFileSync(join(dir, 'y2.npy')));
    expect(y2.shape).toEqual([1, 1, 2, 2]);
    expect([...y2.data]).toEqual([0x5080, 0x5080, 0x5080, 0x5080]);
  });

  it('fuses bias, residual and an activation on the CPU reference, and names bad epilogue flags', async () => {
    // x = w = 1 (the test above): conv = 16 in a corner, 24 on an edge, 36 inside.
    writeFileSync(join(dir, 'b.npy'), writeNpy({ dtype: 'float32', shape: [2], data: Float32Array.of(-20, 0) }));
    writeFileSync(join(dir, 'r.npy'), writeNpy({ dtype: 'float16', shape: [1, 4, 5, 2], data: new Uint16Array(40).fill(0x3c00) }));
    const fused = ['run', '--x', 'x.npy', '--w', 'w.npy', '--device', 'cpu', '--act', 'relu', '--alpha', '0.5', '--bias', 'b.npy', '--residual', 'r.npy', '--beta', '2'];
    const r = await run([...fused, '--out', 'yf.npy', '--json']);
    expect(r.code).toBe(0);
    expect(r.json<{ act: string }>().act).toBe('relu');
    const y = readNpy(readFileSync(join(dir, 'yf.npy')));
    const at = (h: number, w: number, k: number) => y.data[(h * 5 + w) * 2 + k];
    // relu(0.5*conv + bias + 2*1): k 0 corner 8-20+2 < 0 -> 0, k 1 corner 10, k 1 edge 14, k 1 inside 20.
    expect([at(0, 0, 0), at(0, 0, 1), at(0, 2, 1), at(1, 1, 1)]).toEqual([0, 0x4900, 0x4b00, 0x4d00]);
    const bad = async (...more: string[]) => (await run(['run', '--x', 'x.npy', '--w', 'w.npy', '--out', 'o.npy', '--device', 'cpu', ...more])).stderr;
    expect(await bad('--act', 'swish')).toContain("--act must be one of none, relu, relu6, leaky_relu, silu, hard_swish, gelu, sigmoid, clamp (got 'swish')");
    expect(await bad('--act', 'relu', '--beta', '2')).toContain('--beta scales --residual; give one');
    expect(await bad('--act', 'clamp', '--lo', '1')).toContain('--act clamp needs --lo L --hi H with L <= H');
    expect(await bad('--act', 'relu', '--slope', '0.1')).toContain('--slope applies to --act leaky_relu only');
    expect(await bad('--alpha', 'x')).toContain("--alpha must be a finite number (got 'x')");
    expect(await bad('--bias', 'r.npy')).toContain('--bias has shape (1, 4, 5, 2), the problem needs (2)');
    expect(await bad('--residual', 'b.npy')).toContain('--residual has shape (2), y is (1, 4, 5, 2)');
    // On the GPU the flags reach the runtime as the request's epilogue (run-fused.test.ts runs it on the fake binding).
    let asked: RunRequest | undefined;
    const gpu = await run([...fused.filter((a) => a !== 'cpu' && a !== '--device'), '--out', 'yg.npy'], {
      runConv: async (request) => {
        asked = request;
        return { dtype: 'float16', shape: [1, 4, 5, 2], data: new Uint16Array(40) };
      },
    });
    expect(gpu.code).toBe(0);
    expect(asked?.epilogue).toMatchObject({ act: 'relu', alpha: 0.5, beta: 2, bias: Float32Array.of(-20, 0) });
    expect(asked?.epilogue?.residual).toHaveLength(40);
  });

  it('rejects operands that do not fit the problem, and a GPU run without a runtime', async () => {
    writeFileSync(join(dir, 'xb.npy'), writeNpy({ dtype: 'float16', shape: [1, 4, 4, 3], data: new Uint16Array(48) }));
    writeFileSync(join(dir, 'wb.npy'), writeNpy({ dtype: 'uint16', shape: [2, 3, 3, 4], data: new Uint16Array(72) }));
    writeFileSync(join(dir, 'x32.npy'), writeNpy({ dtype: 'float32', shape: [1, 4, 5, 4], data: new Float32Array(80) }));
    const go = (x: string, w: string, ...more: string[]) => run(['run', '--x', x, '--w', w, '--out', 'o.npy', '--device', 'cpu', ...more]);
    const channels = await go('xb.npy', 'wb.npy');
    expect([channels.code, channels.stderr]).toEqual([2, "rocke: w's last dimension 4 does not divide x's channels 3 (rocke --help for usage)\n"]);
    expect((await go('x.npy', 'wb.npy')).stderr).toContain('w is uint16, a fp16 problem needs float16 or float32');
    expect((await go('x32.npy', 'w.npy')).stderr).toContain('x and w are float32: say which dtype to run with --dtype fp16|bf16');
    const miopen = await go('x.npy', 'w.npy', '--miopen', 'convfp16 -n 1 -c 4 -H 4 -W 4 -k 2 -p 1 -q 1');
    expect(miopen.stderr).toContain('x has shape (1, 4, 5, 4), the problem needs (1, 4, 4, 4)');
    expect((await go('x.npy', 'w.npy', '--miopen', 'convfp16 -n 1', '--pad', '1')).stderr).toContain('drop --pad');
    expect((await go('nope.npy', 'w.npy')).stderr).toContain('cannot read --x nope.npy: ENOENT');
    writeFileSync(join(dir, 'junk.npy'), 'not numpy');
    expect((await go('junk.npy', 'w.npy')).stderr).toContain('--x junk.npy: not a .npy file (bad magic)');
    expect((await run(['run', '--x', 'x.npy', '--w', 'w.npy'])).stderr).toContain('run needs --out FILE.npy');
    // With the GPU seam left empty (no runConv), a GPU run says so and writes nothing.
    const gpu = await run(['run', '--x', 'x.npy', '--w', 'w.npy', '--out', 'o.npy'], { runConv: undefined });
    expect(gpu.code).toBe(1);
    expect(gpu.stderr).toContain('no GPU runtime is wired into this build');
    expect(existsSync(join(dir, 'o.npy'))).toBe(false);
  });

  it('renders a report from rows and rejects bad rows', async () => {
    const rows = [
      { shape: 'a', class: 'small-map', ours_ms: 1, cudnn_ms: 2 },
      { shape: 'b', class: 'grouped', ours_ms: 4, cudnn_ms: 2, variant: 'grouped', merge: 4 },
    ];
    writeFileSync(join(dir, 'rows.json'), JSON.stringify({ rows }));
    const r = await run(['report', 'rows.json', '--out', 'chart.svg']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/all\s+2\s+1\.000/);
    const svg = readFileSync(join(dir, 'chart.svg'), 'utf8');
    expect(svg.match(/class="bar"/g)).toHaveLength(4);
    expect((await run(['report', 'rows.json', '--out', 'chart.html'])).code).toBe(0);
    expect(readFileSync(join(dir, 'chart.html'), 'utf8')).toMatch(/^<!doctype html>/);
    writeFileSync(join(dir, 'bad.json'), JSON.stringify([{ shape: 'a', class: 'x', ours_ms: -1, cudnn_ms: 1 }]));
    const bad = await run(['report', 'bad.json', '--out', 'x.svg']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('ours_ms');
    expect((await run(['report', '--out', 'x.svg'])).stderr).toContain('exactly one ROWS.json');
  });

  it('reads the public suite for bench, and needs a GPU runtime to time it', async () => {
    // The in-repo copy of the public suite (../shared is not part of a clone; CI has only the repository).
    const suite = join(import.meta.dirname, '..', '..', 'device', 'public.json');
    const shapes = (JSON.parse(readFileSync(suite, 'utf8')) as { shapes: unknown[] }).shapes.length;
    const r = await run(['bench', '--suite', suite, '--verify'], { bench: undefined });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no GPU runtime is wired into this build; ${shapes} problem(s) parsed, nothing timed`);
    // Through the seam: the bench implementation gets the parsed problems and its rows become the report.
    const seen: string[] = [];
    const bench = async (req: { problems: { name: string; cls: string | null }[]; verify: boolean }) => {
      for (const p of req.problems) seen.push(`${p.name}:${p.cls}:${req.verify}`);
      return { rows: req.problems.slice(0, 2).map((p, i) => ({ shape: p.name, class: p.cls ?? 'x', ours_ms: 1 + i, cudnn_ms: 2 })), failures: 0 };
    };
    const ok = await run(['bench', '--suite', suite, '--verify', '--vs-cudnn', '--report', 'bench.html'], { bench });
    expect(ok.code).toBe(0);
    expect(seen).toHaveLength(shapes);
    expect(seen[0]).toBe('sm_7x7_512:small-map:true');
    expect(ok.stdout).toMatch(/sm_7x7_512\s+small-map\s+1\.0000\s+2\.0000\s+2\.000/);
    expect(existsSync(join(dir, 'bench.html'))).toBe(true);
    expect((await run(['bench'])).stderr).toContain('bench needs a problem (--n --c --h --w --k ..., or --miopen LINE), a --suite or a --miopen-file');
    writeFileSync(join(dir, 'suite.json'), JSON.stringify({ shapes: [{ name: 'z', N: 1, C: 6, H: 4, W: 4, K: 6, R: 3, S: 3, groups: 4, dtype: 'bf16' }] }));
    expect((await run(['bench', '--suite', 'suite.json'])).stderr).toContain('suite shape 0 (z): groups 4 does not divide C 6');
  });
});

describe('rocke executable (real process)', () => {
  let bundle = '';
  beforeAll(async () => {
    bundle = await bundleForNode(join(import.meta.dirname, '..', 'cli.ts'), { __PACKAGE_VERSION__: JSON.stringify('0.0.0') });
  });

  it('runs as a node process: shebang, exit codes, stdout/stderr', () => {
    expect(readFileSync(bundle, 'utf8').startsWith('#!/usr/bin/env node')).toBe(true);
    const help = spawnSync(process.execPath, [bundle, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('usage: rocke <command>');
    const bad = spawnSync(process.execPath, [bundle, 'plan', '--n', 'x'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('rocke: ');
    const plan = spawnSync(process.execPath, [bundle, 'plan', ...SMALL, '--json'], { encoding: 'utf8' });
    expect(plan.status).toBe(0);
    expect(JSON.parse(plan.stdout).label).toBe('n1h7w7c512k512_r3s3_u1v1_p1q1_g1_bf16');
  });

  it('two compile-all processes on one cache at once both succeed and lose nothing', async () => {
    const { cacheDir } = cliHarness();
    const runOne = () =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, [bundle, 'compile-all', '--family', 'axpy', '--target', 'gfx950,gfx942', '--jobs', '2', '--quiet', '--json'], {
          env: { ...process.env, ROCKE_CACHE_DIR: cacheDir },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.on('close', (code) => resolve({ code, out }));
      });
    const [a, b] = await Promise.all([runOne(), runOne()]);
    expect([a.code, b.code]).toEqual([0, 0]);
    const ra = JSON.parse(a.out) as CompileAllReport;
    const rb = JSON.parse(b.out) as CompileAllReport;
    // gfx950 and gfx942: 2 scales x {None, 3} + scratch + pressure = 6 each.
    expect([ra.total, rb.total]).toEqual([12, 12]);
    const cache = new KernelCache(cacheDir);
    const { entries, corrupt } = cache.listEntries();
    expect(corrupt).toEqual([]);
    expect(entries).toHaveLength(12);
    expect(entries.every((e) => cache.checkBlob(e.code).ok && cache.checkBlob(e.ir).ok)).toBe(true);
    expect(readdirSync(cache.indexDir).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  // dist/cli.js imports the siblings' dist builds: run it only when all of them are newer than their sources.
  const packagesDir = join(import.meta.dirname, '..', '..', '..');
  const newestSource = (dir: string) =>
    Math.max(...readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => statSync(join(e.parentPath, e.name)).mtimeMs));
  const fresh = (pkg: string, entry: string) => {
    const out = join(packagesDir, pkg, 'dist', entry);
    return existsSync(out) && statSync(out).mtimeMs >= newestSource(join(packagesDir, pkg, 'src'));
  };
  const dist = join(packagesDir, 'pipeline', 'dist', 'cli.js');
  const siblings = ['ir', 'conv-direct', 'split-reduce', 'elf-prune', 'hip-runtime', 'reference'];
  const distFresh = fresh('pipeline', 'cli.js') && siblings.every((p) => fresh(p, 'index.js'));
  it.skipIf(!distFresh)('the built dist/cli.js runs (skipped unless it and every sibling dist are newer than their src)', () => {
    const r = spawnSync(process.execPath, [dist, '--version'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(spawnSync(process.execPath, [dist, 'nope'], { encoding: 'utf8' }).status).toBe(2);
  });
});

describe('rocke tune, cache merge and catalog', () => {
  const { run, dir, cacheDir } = cliHarness();

  it('tune shards its problems and hands them to the GPU seam; bad shards are usage errors', async () => {
    const suite = join(dir, 'tune-suite.json');
    writeFileSync(suite, JSON.stringify({ shapes: [1, 2, 3, 4, 5].map((i) => ({ name: `s${i}`, N: 1, C: 64 * i, H: 8, W: 8, K: 64, R: 3, S: 3, stride: 1, pad: 1, dtype: 'bf16' })) }));
    const seen: string[][] = [];
    const tune = async (request: { problems: { name: string }[]; verify: boolean }) => {
      seen.push([...request.problems.map((p) => p.name), String(request.verify)]);
      return { lines: [], failures: 0 };
    };
    for (const i of [0, 1, 2]) expect((await run(['tune', '--suite', suite, '--shard', `${i}/3`], { tune })).code).toBe(0);
    expect(seen.flatMap((s) => s.slice(0, -1)).sort()).toEqual(['s1', 's2', 's3', 's4', 's5']);
    expect(seen.every((s) => s[s.length - 1] === 'true')).toBe(true);
    expect((await run(['tune', '--suite', suite, '--shard', '3/3'], { tune })).stderr).toMatch(/shard index 3 is not below the shard count 3/);
    expect((await run(['tune', '--suite', suite, '--shard', 'auto/2'], { tune })).code).toBe(2);
    expect((await run(['tune', '--suite', suite], { tune: undefined })).code).toBe(1);
  });

  it('cache merge folds record directories, the faster record winning; a corrupt record exits 1', async () => {
    const a = join(dir, 'm-a');
    const b = join(dir, 'm-b');
    const rec = (t: number, k: string) => ({
      schema: 1 as const, key: recordKey('f', 'sm_90', { p: 1 }), family: 'f', arch: 'sm_90', problem: { p: 1 },
      choice: { kernelName: k, spec: {}, launch: {}, code: null }, timeMs: t, runnersUp: [], verified: { mode: 'full' },
      device: { name: 'd', driver: '1' }, toolchain: 't', date: '2026-12-03T00:00:00.000Z',
    });
    new RecordStore(a).put(rec(2, 'slow'));
    new RecordStore(b).put(rec(1, 'fast'));
    const r = await run(['cache', 'merge', a, b, '--json']);
    expect(r.code).toBe(0);
    expect(new RecordStore(cacheDir).get(rec(1, 'x').key)?.choice.kernelName).toBe('fast');
    writeFileSync(join(b, 'records', `${'0'.repeat(64)}.json`), 'nope');
    const bad = await run(['cache', 'merge', b]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/corrupt tuning record .*not JSON/);
    expect((await run(['cache', 'merge'])).code).toBe(2);
  });

  it('catalog build needs a target and an output directory', async () => {
    expect((await run(['catalog', 'build', '--out', join(dir, 'cat')])).stderr).toMatch(/needs --target/);
    expect((await run(['catalog', 'build', '--target', 'sm_90'])).stderr).toMatch(/needs --out/);
    const ok = await run(['catalog', 'build', '--target', 'sm_90', '--out', join(dir, 'cat'), '--json']);
    expect(ok.code).toBe(0);
    expect(ok.json<{ kernels: number; plans: unknown[] }>().plans).toEqual([]);
  });
});
