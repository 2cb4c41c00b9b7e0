// Hostile input, generated: argument vectors, MIOpenDriver lines, .npy headers, suite files and
// cache records, each through the real CLI entry (`main`, in-process). Whatever the input, a run
// ends with exit 0, 1 or 2; a failure says why on stderr in printable lines without a stack trace
// (a usage error in exactly one line); no file appears outside the output the command names; each
// case stays within a time budget and the process within a memory bound. Seeded, so a failure
// replays; the case counts and total time are printed.
import fc from 'fast-check';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMiopenCommand } from '@rocke/conv-direct';
import { KernelCache } from '../cache/cache.js';
import { axpyFamily } from '../compile/axpy-family.js';
import type { KernelCompiler } from '../compile/llvm-toolchain.js';
import type { CliIo } from '../io.js';
import { readNpy, writeNpy } from '../npy.js';
import { cliHarness } from '../testing/cli-harness.js';
import type { CliDeps } from './deps.js';
import { main } from './main.js';
import { readMiopenFile, readSuite } from './problem-input.js';

const SEED = 20261203;
/** One case may take this long (a cold problemCandidates on a loaded 2-core machine is ~0.2 s). */
const CASE_BUDGET_MS = 3000;
/** Resident memory the test process may reach; a forged size that allocated would pass it. */
const RSS_LIMIT = 2 * 1024 ** 3;

const tally: { suite: string; cases: number; ms: number }[] = [];
afterAll(() => {
  const total = tally.reduce((a, t) => ({ cases: a.cases + t.cases, ms: a.ms + t.ms }), { cases: 0, ms: 0 });
  const rows = tally.map((t) => `  ${t.suite}: ${t.cases} cases, ${(t.ms / 1000).toFixed(1)} s`).join('\n');
  console.log(`hostile inputs: ${total.cases} cases in ${(total.ms / 1000).toFixed(1)} s\n${rows}`);
});

/** A fast compiler that refuses at once: compile-all and bench-prep fail their jobs without LLVM. */
const refusingCompiler: KernelCompiler = {
  flavor: 'llvm22',
  fingerprint: () => Promise.reject(new Error('no toolchain in the hostile-input test')),
  compile: () => Promise.reject(new Error('no toolchain in the hostile-input test')),
};
const FUZZ_DEPS: Partial<CliDeps> = {
  families: () => [axpyFamily()],
  defaultFamilyNames: ['axpy'],
  compiler: () => refusingCompiler,
  pruner: () => null,
  bench: undefined,
  runConv: undefined,
};

/** Every file under `dir` except the cache, relative, with size and mtime. */
function snapshot(dir: string, skip: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = join(e.parentPath, e.name);
    if (!e.isFile() || path.startsWith(skip)) continue;
    const st = statSync(path);
    out.set(relative(dir, path), `${st.size}:${st.mtimeMs}`);
  }
  return out;
}

/** The sandbox a suite of cases runs in, and the checked CLI call. */
function sandbox(deps: Partial<CliDeps> = FUZZ_DEPS) {
  const { dir, cacheDir } = cliHarness();
  const call = async (argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
    let stdout = '';
    let stderr = '';
    const io: CliIo = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), stderrIsTTY: false, columns: 100, env: { ROCKE_CACHE_DIR: cacheDir }, cwd: dir };
    const before = snapshot(dir, cacheDir);
    const started = performance.now();
    const code = await main(argv, io, deps);
    const ms = performance.now() - started;
    const context = JSON.stringify(argv).slice(0, 300);
    expect([0, 1, 2], context).toContain(code);
    expect(stderr, context).not.toMatch(/\n\s+at |^\s+at /m);
    expect(stderr, context).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    if (code !== 0) expect(stderr.trim().length, context).toBeGreaterThan(0);
    if (code === 2) expect(stderr.split('\n').filter(Boolean), context).toHaveLength(1);
    // Only the named output may appear or change.
    const named = new Set(['--out', '--report'].flatMap((f) => argv.flatMap((a, i) => (a === f && argv[i + 1] !== undefined ? [relative(dir, resolve(dir, argv[i + 1]!))] : []))));
    const after = snapshot(dir, cacheDir);
    for (const [path, stamp] of after) if (before.get(path) !== stamp) expect(named.has(path), `${context} wrote ${path}`).toBe(true);
    expect(ms, context).toBeLessThan(CASE_BUDGET_MS);
    expect(process.memoryUsage().rss, context).toBeLessThan(RSS_LIMIT);
    return { code, stdout, stderr };
  };
  return { dir, cacheDir, call };
}

/** Runs `property` for `runs` seeded cases and records the count and time. */
async function fuzz<T>(suite: string, arb: fc.Arbitrary<T>, runs: number, property: (value: T) => Promise<void> | void): Promise<void> {
  const started = performance.now();
  await fc.assert(
    fc.asyncProperty(arb, async (v) => {
      await property(v);
    }),
    { seed: SEED, numRuns: runs, endOnFailure: true },
  );
  tally.push({ suite, cases: runs, ms: performance.now() - started });
}

const HOSTILE_TEXT = fc.oneof(
  fc.constantFrom('', ' ', '0', '-1', '1', '3.5', '1e11', '100000000000', '9007199254740993', 'NaN', 'Infinity', '0x10', '٣', '\u001b[2J', 'a\nb', '\u2028', 'null', '{}', '[]'),
  fc.string({ maxLength: 24 }),
  fc.string({ unit: 'binary', maxLength: 24 }),
  fc.integer().map(String),
);

/** A value for a flag that names a file: only sandbox names and a few safe system paths. */
const SAFE_PATHS = ['x.npy', 'w.npy', 'bad.npy', 'suite.json', 'log.txt', 'rows.json', 'out.npy', 'out.html', 'sub/y.npy', 'missing.json', '/dev/zero', '/nonexistent/x'];
const PATH_FLAGS = new Set(['--x', '--w', '--bias', '--residual', '--out', '--suite', '--miopen-file', '--cache-dir', '--report']);
/** Outputs are never system paths here: the refusal of devices is tested without risking one. */
const OUTPUT_FLAGS = new Set(['--out', '--report', '--cache-dir']);

describe('hostile inputs through the CLI', () => {
  it('argument vectors: any command, flags and values', async () => {
    const { dir, call } = sandbox();
    writeFileSync(join(dir, 'x.npy'), writeNpy({ dtype: 'float16', shape: [1, 4, 4, 2], data: new Uint16Array(32).fill(0x3c00) }));
    writeFileSync(join(dir, 'w.npy'), writeNpy({ dtype: 'float16', shape: [2, 3, 3, 2], data: new Uint16Array(36).fill(0x3c00) }));
    writeFileSync(join(dir, 'bad.npy'), 'not numpy');
    writeFileSync(join(dir, 'suite.json'), '{"shapes": [{"name": "s", "N": 1, "C": 8, "H": 4, "W": 4, "K": 8, "R": 3, "S": 3, "dtype": "bf16", "groups": 3}]}');
    writeFileSync(join(dir, 'log.txt'), 'nothing here\n');
    writeFileSync(join(dir, 'rows.json'), '[{"shape": "a", "class": "c", "ours_ms": 1, "cudnn_ms": -2}]');
    const command = fc.constantFrom('plan', 'run', 'report', 'cache', 'bench', 'compile-all', 'bench-prep', 'help', '--version', 'nope', '');
    const flag = fc.constantFrom(
      '--n', '--c', '--h', '--w', '--k', '--r', '--s', '--stride', '--pad', '--dilation', '--groups', '--dtype', '--miopen', '--suite', '--miopen-file',
      '--target', '--variant', '--kernel', '--json', '--help', '--cache-dir', '--x', '--out', '--device', '--grid', '--family', '--cap', '--limit',
      '--jobs', '--repair', '--dry-run', '--grace-hours', '--report', '--iters', '--warmup', '--title', '--quiet', '--', '-n', '--n=1', 'ls', 'verify', 'gc', 'prune',
      '--act', '--alpha', '--beta', '--slope', '--lo', '--hi', '--bias', '--residual',
    );
    const argv = fc.tuple(command, fc.array(fc.oneof({ weight: 3, arbitrary: flag }, { weight: 2, arbitrary: HOSTILE_TEXT }, { weight: 1, arbitrary: fc.constantFrom(...SAFE_PATHS) }), { maxLength: 12 }));
    await fuzz('argv', argv, 1500, async ([cmd, rest]) => {
      // A value after a path flag stays in the sandbox (a random '/…' would be a real path as root).
      const args = rest.map((a, i) => {
        const after = rest[i - 1] ?? '';
        const unsafe = (PATH_FLAGS.has(after) && !SAFE_PATHS.includes(a)) || (OUTPUT_FLAGS.has(after) && a.startsWith('/'));
        return unsafe ? `f_${a.replace(/[/\\.]/g, '_')}` : a;
      });
      await call(cmd === '' ? args : [cmd, ...args]);
    });
  });

  it('MIOpenDriver lines: --miopen and --miopen-file', async () => {
    const { dir, call } = sandbox();
    const base = 'convbfp16 -n 1 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1'.split(' ');
    const mutated = fc.tuple(fc.array(fc.tuple(fc.nat(base.length - 1), HOSTILE_TEXT), { maxLength: 4 }), fc.array(HOSTILE_TEXT, { maxLength: 3 })).map(([edits, extra]) => {
      const t = [...base];
      for (const [i, v] of edits) t[i] = v;
      return [...t, ...extra].join(' ');
    });
    const line = fc.oneof(mutated, fc.string({ maxLength: 80 }), fc.array(fc.constantFrom('convfp16', 'conv', '-n', '-c', '-H', '-F', '2', '-1', '0', '99999999999', '--in_layout', 'NCHW', 'MIOpenDriver'), { maxLength: 16 }).map((t) => t.join(' ')));
    await fuzz('MIOpenDriver lines (parser)', line, 5000, (l) => {
      const r = parseMiopenCommand(l);
      expect(typeof r.ok).toBe('boolean');
      if (!r.ok) expect(r.reason).not.toContain('\n');
    });
    // --variant bogus: a parsed problem stops at the variant check, so no candidate grid is built.
    await fuzz('MIOpenDriver lines (--miopen)', line, 1000, async (l) => {
      const r = await call(['plan', '--miopen', l, '--variant', 'bogus']);
      expect(r.code).toBe(2);
    });
    await fuzz('MIOpenDriver files (--miopen-file)', fc.array(fc.oneof(line, fc.constant(`MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver ${base.join(' ')}`)), { maxLength: 20 }), 300, async (lines) => {
      writeFileSync(join(dir, 'log.txt'), lines.join('\n'));
      try {
        readMiopenFile(lines.join('\n'));
      } catch (err) {
        expect((err as Error).name).toBe('UsageError');
      }
      expect((await call(['plan', '--miopen-file', 'log.txt', '--variant', 'bogus'])).code).toBe(2);
    });
  });

  it('.npy headers: forged magic, versions, lengths, dicts, shapes and dtypes', async () => {
    const { dir, call } = sandbox();
    writeFileSync(join(dir, 'w.npy'), writeNpy({ dtype: 'float16', shape: [2, 3, 3, 2], data: new Uint16Array(36) }));
    const good = writeNpy({ dtype: 'float16', shape: [1, 4, 4, 2], data: new Uint16Array(32) });
    const dictText = fc.oneof(
      fc.record({ descr: fc.constantFrom("'<f2'", "'<f4'", "'>u2'", "'|b1'", "'<f8'", '1', "'<f2", '(((('), fortran: fc.constantFrom('False', 'True', '0', 'None'), shape: fc.oneof(fc.constantFrom('()', '(0,)', '(1, 4, 4, 2)', '(4294967296, 4294967296)', '(-1, 2)', '(1.5,)', "('a',)", '((((((((((1,),),),),),),),),),)', '[1, 2]'), fc.array(fc.nat(), { maxLength: 6 }).map((d) => `(${d.join(', ')}${d.length === 1 ? ',' : ''})`)) }).map(
        (h) => `{'descr': ${h.descr}, 'fortran_order': ${h.fortran}, 'shape': ${h.shape}, }`,
      ),
      fc.string({ maxLength: 120 }),
      fc.constant('('.repeat(60000)),
      fc.constant(`{'__proto__': {'descr': '<f2'}, 'shape': (1,)}`),
    );
    const file = fc.oneof(
      fc.tuple(fc.constantFrom(1, 2, 3, 0, 255), dictText, fc.nat(4096), fc.boolean()).map(([major, text, extra, lie]) => {
        const body = Buffer.from(text, 'latin1');
        const pre = major === 1 ? 10 : 12;
        const out = Buffer.alloc(pre + body.length + extra);
        Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, major, 0]).copy(out);
        const len = lie ? 0xffffffff : body.length;
        if (major === 1) out.writeUInt16LE(len & 0xffff, 8);
        else out.writeUInt32LE(len >>> 0, 8);
        body.copy(out, pre);
        return new Uint8Array(out);
      }),
      fc.tuple(fc.nat(good.length - 1), fc.integer({ min: 0, max: 255 }), fc.nat(good.length)).map(([at, byte, cut]) => {
        const b = good.slice(0, Math.max(cut, 1));
        if (at < b.length) b[at] = byte;
        return b;
      }),
      fc.uint8Array({ maxLength: 256 }),
    );
    await fuzz('.npy headers (reader)', file, 5000, (bytes) => {
      try {
        readNpy(bytes);
      } catch (err) {
        expect((err as Error).name).toBe('NpyFormatError');
        expect((err as Error).message.length).toBeLessThan(600);
      }
    });
    await fuzz('.npy headers (rocke run)', file, 600, async (bytes) => {
      writeFileSync(join(dir, 'x.npy'), bytes);
      await call(['run', '--x', 'x.npy', '--w', 'w.npy', '--out', 'y.npy', '--device', 'cpu']);
    });
  });

  it('suite files: any JSON, mutated shapes', async () => {
    const { dir, call } = sandbox();
    const shape = fc.record(
      {
        name: fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.constant(null)),
        N: fc.oneof(fc.integer({ min: -2, max: 64 }), fc.constantFrom(1e11, 2 ** 53, 0.5, '1', null)),
        C: fc.oneof(fc.integer({ min: -2, max: 4096 }), fc.constantFrom(1e9, 'x')),
        H: fc.integer({ min: -1, max: 4096 }),
        W: fc.integer({ min: -1, max: 4096 }),
        K: fc.oneof(fc.integer({ min: -1, max: 4096 }), fc.constant(2 ** 31)),
        R: fc.integer({ min: 0, max: 64 }),
        S: fc.integer({ min: 0, max: 64 }),
        stride: fc.integer({ min: -1, max: 8 }),
        pad: fc.integer({ min: -1, max: 40 }),
        groups: fc.integer({ min: 0, max: 64 }),
        dtype: fc.constantFrom('bf16', 'fp16', 'fp32', 1),
        cls: fc.string({ maxLength: 8 }),
        extra: fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: [] },
    );
    const text = fc.oneof(
      fc.record({ shapes: fc.array(shape, { maxLength: 6 }) }).map((s) => JSON.stringify(s)),
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 200 }),
      fc.constant(`{"shapes": ${'['.repeat(5000)}${']'.repeat(5000)}}`),
    );
    await fuzz('suite files (reader)', text, 3000, (t) => {
      try {
        readSuite(t);
      } catch (err) {
        expect((err as Error).name).toBe('UsageError');
      }
    });
    await fuzz('suite files (plan --suite)', text, 600, async (t) => {
      writeFileSync(join(dir, 'suite.json'), t);
      expect((await call(['plan', '--suite', 'suite.json', '--variant', 'bogus'])).code).toBe(2);
    });
  });

  describe('cache records', () => {
    // One real entry (axpy on gfx950, LLVM), so `cache verify` has a real code object to check against.
    let box: ReturnType<typeof sandbox>;
    let original = '';
    let recordPath = '';
    beforeAll(async () => {
      box = sandbox({});
      const r = await box.call(['compile-all', '--family', 'axpy', '--target', 'gfx950', '--limit', '1', '--quiet', '--jobs', '1']);
      expect(r.code).toBe(0);
      const cache = new KernelCache(box.cacheDir);
      const [id] = cache.listIds();
      recordPath = cache.entryPath(id!);
      original = readFileSync(recordPath, 'utf8');
    }, 120_000);

    it('edited, truncated and retyped records', async () => {
      const leafPaths = (v: unknown, prefix: string[] = []): string[][] =>
        v !== null && typeof v === 'object' ? Object.entries(v).flatMap(([k, c]) => leafPaths(c, [...prefix, k])) : [prefix];
      const paths = leafPaths(JSON.parse(original));
      const edit = fc.tuple(fc.constantFrom(...paths), fc.jsonValue({ maxDepth: 2 })).map(([path, value]) => {
        const record = JSON.parse(original) as Record<string, unknown>;
        let at = record;
        for (const k of path.slice(0, -1)) at = at[k] as Record<string, unknown>;
        at[path[path.length - 1]!] = value;
        return JSON.stringify(record);
      });
      const record = fc.oneof(
        { weight: 4, arbitrary: edit },
        { weight: 1, arbitrary: fc.nat(original.length).map((n) => original.slice(0, n)) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
      );
      await fuzz('cache records (cache verify, ls)', record, 500, async (text) => {
        writeFileSync(recordPath, text);
        expect([0, 1]).toContain((await box.call(['cache', 'verify'])).code);
        expect((await box.call(['cache', 'ls', '--json'])).code).toBe(0);
      });
      writeFileSync(recordPath, original);
      expect((await box.call(['cache', 'verify'])).code).toBe(0);
    }, 120_000);
  });
});
