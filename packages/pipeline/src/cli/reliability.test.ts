// One test per hostile-input or fault defect the CLI had: outputs never replace a symlink or a
// device, inputs are read under a cap, problems no kernel serves are exit 2 with the reason, cache
// records are checked against their code, a closed stdout or SIGTERM ends cleanly, temp dirs do not
// outlive their process, maintenance reports what it could not delete, reasons stay one line.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { sweepStaleTempDirs, TOOLCHAIN_TEMP_PREFIX } from '@rocke/ir';
import { checkReplaceable, UnsafeTargetError, writeFileAtomic } from '../atomic-file.js';
import { readFileBounded } from '../bounded-read.js';
import { KernelCache } from '../cache/cache.js';
import type { CompileAllReport } from '../compile/compile-all.js';
import { writeNpy } from '../npy.js';
import { bundleForNode } from '../testing/bundle.js';
import { cliHarness } from '../testing/cli-harness.js';

const SMALL = ['--n', '1', '--c', '512', '--h', '7', '--w', '7', '--k', '512', '--pad', '1', '--dtype', 'bf16'];
/** A 101x101 filter: no tile of any target stages even its halo in shared memory. */
const UNSERVED = 'convbfp16 -n 1 -c 64 -H 56 -W 56 -k 64 -y 101 -x 101 -p 50 -q 50 -u 1 -v 1 -g 1';

/** One line on stderr, no stack trace. */
function oneReason(stderr: string): void {
  expect(stderr.endsWith('\n')).toBe(true);
  expect(stderr.slice(0, -1)).not.toContain('\n');
  expect(stderr).not.toMatch(/\n\s+at /);
}

describe('outputs: never replace a symlink or a device, errors name the flag', () => {
  const { run, dir } = cliHarness();
  beforeAll(() => {
    writeFileSync(join(dir, 'x.npy'), writeNpy({ dtype: 'float16', shape: [1, 4, 4, 2], data: new Uint16Array(32).fill(0x3c00) }));
    writeFileSync(join(dir, 'w.npy'), writeNpy({ dtype: 'float16', shape: [2, 3, 3, 2], data: new Uint16Array(36).fill(0x3c00) }));
  });
  const go = (out: string) => run(['run', '--x', 'x.npy', '--w', 'w.npy', '--out', out, '--device', 'cpu']);

  it('refuses --out onto a symlink, leaving the link and its target as they were', async () => {
    writeFileSync(join(dir, 'target.txt'), 'keep me');
    symlinkSync(join(dir, 'target.txt'), join(dir, 'link.npy'));
    const r = await go('link.npy');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--out link.npy is a symbolic link, not a regular file');
    oneReason(r.stderr);
    expect(lstatSync(join(dir, 'link.npy')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir, 'target.txt'), 'utf8')).toBe('keep me');
  });

  it('refuses --out onto a FIFO and knows /dev/null is a device (checked without writing it)', async () => {
    expect(spawnSync('mkfifo', [join(dir, 'pipe.npy')]).status).toBe(0);
    const r = await go('pipe.npy');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--out pipe.npy is a FIFO');
    expect(lstatSync(join(dir, 'pipe.npy')).isFIFO()).toBe(true);
    expect(() => checkReplaceable('/dev/null')).toThrow(new UnsafeTargetError('/dev/null', 'character device'));
    expect(() => writeFileAtomic(dir, 'x')).toThrow(UnsafeTargetError);
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('names --out, not the temp file, when the write fails', async () => {
    const r = await go('no-such-dir/y.npy');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('rocke run: cannot write --out no-such-dir/y.npy: ENOENT: no such file or directory\n');
    const ok = await go('y.npy');
    expect(ok.code).toBe(0);
  });
});

describe('inputs: read under a cap', () => {
  const { run, dir } = cliHarness();

  it('fails fast on /dev/zero and on a header whose shape passes the operand limit', async () => {
    writeFileSync(join(dir, 'w.npy'), writeNpy({ dtype: 'float16', shape: [2, 3, 3, 2], data: new Uint16Array(36) }));
    const started = Date.now();
    const zero = await run(['run', '--x', '/dev/zero', '--w', 'w.npy', '--out', 'y.npy', '--device', 'cpu']);
    expect([zero.code, zero.stderr]).toEqual([2, 'rocke: --x /dev/zero: not a .npy file (bad magic) (rocke --help for usage)\n']);
    // A 128-byte file whose header claims 2^44 bytes of data.
    const forged = writeNpy({ dtype: 'float16', shape: [0, 4, 4, 2], data: new Uint16Array(0) });
    const text = Buffer.from(forged).toString('latin1').replace('(0, 4, 4, 2)', '(1048576, 1048576, 4, 4)');
    writeFileSync(join(dir, 'huge.npy'), Buffer.from(text, 'latin1'));
    const huge = await run(['run', '--x', 'huge.npy', '--w', 'w.npy', '--out', 'y.npy', '--device', 'cpu']);
    expect(huge.code).toBe(2);
    expect(huge.stderr).toContain('cannot read --x huge.npy: shape (1048576, 1048576, 4, 4) of float16 is 35184372088832 bytes, over the 4294967296-byte limit per operand');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(() => readFileBounded('/dev/zero', 1 << 16)).toThrow('is a character device longer than the 65536-byte limit');
  });

  it('refuses a suite past the text limit without reading it all', async () => {
    const r = await run(['plan', '--suite', '/dev/zero']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cannot read --suite /dev/zero: is a character device longer than the 67108864-byte limit');
  });
});

describe('a problem no kernel serves: exit 2 with the decisive reason', () => {
  const { run, cacheDir } = cliHarness();
  const reason = /no valid dense candidate on gfx950: LDS \d+ bytes exceed the 163840-byte limit of gfx950 \(this rule rejects \d+ of \d+ candidates\)/;

  it('plan, compile-all (compiling nothing) and bench', async () => {
    const plan = await run(['plan', '--miopen', UNSERVED]);
    expect(plan.code).toBe(2);
    expect(plan.stderr).toMatch(reason);
    oneReason(plan.stderr);
    const compile = await run(['compile-all', '--miopen', UNSERVED, '--quiet']);
    expect(compile.code).toBe(2);
    expect(compile.stderr).toMatch(reason);
    oneReason(compile.stderr);
    expect(existsSync(join(cacheDir, 'index')) ? readdirSync(join(cacheDir, 'index')) : []).toEqual([]);
    const bench = await run(['bench', '--miopen', UNSERVED, '--target', 'gfx950']);
    expect(bench.code).toBe(2);
    expect(bench.stderr).toMatch(reason);
  });

  it('refuses a batch past the plan limit without overflowing the stack', async () => {
    const r = await run(['plan', '--n', '100000000000', '--c', '128', '--h', '128', '--w', '128', '--k', '128', '--pad', '1', '--dtype', 'bf16']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/needs \d+ launches of at most \d+ images, over the limit of 1024 per plan/);
    oneReason(r.stderr);
  });

  it('refuses a problem past the CPU reference budget with exit 2 and a CLI remedy', async () => {
    const { run: runIn, dir } = cliHarness();
    // y of one image: 64 x 64 x 140000 x 4 bytes as fp32, past 2^31.
    writeFileSync(join(dir, 'x.npy'), writeNpy({ dtype: 'float16', shape: [1, 64, 64, 1], data: new Uint16Array(4096) }));
    writeFileSync(join(dir, 'w.npy'), writeNpy({ dtype: 'float16', shape: [140000, 1, 1, 1], data: new Uint16Array(140000) }));
    const r = await runIn(['run', '--x', 'x.npy', '--w', 'w.npy', '--out', 'y.npy', '--device', 'cpu']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--device cpu: one image needs 2293760000 bytes as fp32 (x 16384, y 2293760000), over the CPU reference's budget of 2147483648 bytes per operand; run it with --device gpu");
    expect(existsSync(join(dir, 'y.npy'))).toBe(false);
  });
});

describe('flags: repeats are errors, echoed values stay on one line', () => {
  const { run } = cliHarness();

  it('rejects --n 1 --n 2', async () => {
    const r = await run(['plan', ...SMALL, '--n', '2']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("plan: option '--n' given more than once ('1', '2'); give it once");
  });

  it('escapes newlines and escape sequences in echoed values, and caps their length', async () => {
    const r = await run(['plan', '--n', '1\n\u001b[31mred', '--c', '8', '--h', '8', '--w', '8', '--k', '8', '--dtype', 'bf16']);
    expect(r.code).toBe(2);
    oneReason(r.stderr);
    expect(r.stderr).not.toContain('\u001b');
    expect(r.stderr).toContain('1\\n\\u001b[31mred');
    const long = await run(['plan', '--variant', 'v'.repeat(100_000), ...SMALL]);
    oneReason(long.stderr);
    expect(long.stderr.length).toBeLessThan(1200);
  });
});

describe('cache records are checked against their code', () => {
  const { run, cacheDir } = cliHarness();

  it('cache verify and compile-all catch an edited kernelName or facts field; a mistyped --cache-dir is an error', async () => {
    const first = await run(['compile-all', '--family', 'axpy', '--target', 'gfx950', '--jobs', '2', '--quiet', '--json']);
    expect(first.code).toBe(0);
    const cache = new KernelCache(cacheDir);
    const [a, b] = cache.listEntries().entries.filter((e) => e.facts !== null);
    expect(a && b).toBeTruthy();
    const edit = (id: string, change: (record: Record<string, unknown>) => void) => {
      const path = cache.entryPath(id);
      const record = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
      change(record);
      writeFileSync(path, JSON.stringify(record));
    };
    edit(a!.id, (r) => void (r['kernelName'] = 'evil_kernel'));
    edit(b!.id, (r) => {
      const facts = r['facts'] as { spills: { any: boolean } };
      facts.spills.any = !facts.spills.any;
    });
    const verify = await run(['cache', 'verify', '--json']);
    expect(verify.code).toBe(1);
    const problems = verify.json<{ problems: { kind: string; id: string; detail: string }[] }>().problems;
    expect(problems.map((p) => [p.kind, p.id]).sort()).toEqual([['record-mismatch', a!.id], ['record-mismatch', b!.id]].sort());
    expect(problems.find((p) => p.id === a!.id)?.detail).toMatch(/^kernel evil_kernel cannot be read from its code object/);
    expect(problems.find((p) => p.id === b!.id)?.detail).toMatch(/^stored facts differ from the code object's: at spills\.any, stored (true|false), code (true|false)$/);
    const again = (await run(['compile-all', '--family', 'axpy', '--target', 'gfx950', '--jobs', '2', '--quiet', '--json'])).json<CompileAllReport>();
    expect(again.rebuiltByCause).toEqual({ 'record disagrees with its code': 2 });
    expect((await run(['cache', 'verify'])).code).toBe(0);
    expect(cache.getEntry(a!.id)?.kernelName).toBe(a!.kernelName);

    const missing = await run(['cache', 'verify', '--cache-dir', join(cacheDir, 'nonexistent')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`no cache at ${join(cacheDir, 'nonexistent')} (--cache-dir)`);
  });

  it('cache gc lists what it could not delete instead of calling it removed', async () => {
    const cache = new KernelCache(cacheDir).ensure();
    // A temp name gc will try to unlink that is a directory: unlink fails (EISDIR) even for root.
    const stuck = join(cache.indexDir, '.stuck.1.abc.tmp');
    mkdirSync(stuck);
    writeFileSync(join(stuck, 'f'), '');
    const old = new Date(Date.now() - 2 * 3_600_000);
    utimesSync(stuck, old, old);
    const r = await run(['cache', 'gc', '--json']);
    expect(r.code).toBe(1);
    const report = r.json<{ removedTemps: string[]; failed: { path: string; error: string }[] }>();
    expect(report.removedTemps).toEqual([]);
    expect(report.failed).toEqual([{ path: stuck, error: expect.stringMatching(/^E(ISDIR|PERM)/) }]);
    expect(r.stderr).toMatch(/could not delete .*\.stuck\.1\.abc\.tmp: E(ISDIR|PERM)/);
  });
});

describe('process faults (real processes)', () => {
  let bundle = '';
  beforeAll(async () => {
    bundle = await bundleForNode(join(import.meta.dirname, '..', 'cli.ts'));
  });

  it('a closed stdout (EPIPE) ends plan quietly, without a stack trace', async () => {
    const r = await new Promise<{ code: number | null; err: string }>((resolve) => {
      const child = spawn(process.execPath, [bundle, 'plan', ...SMALL, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.destroy();
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('close', (code) => resolve({ code, err }));
    });
    expect(r.err).not.toMatch(/EPIPE|\n\s+at /);
    expect(r.code).toBe(0);
  });

  it('SIGTERM removes the compile temp dirs; what a SIGKILL leaves is swept by the next run', async () => {
    const root = mkdtempSync(join(tmpdir(), 'rocke-term-'));
    // An LLVM whose opt hangs, so the compiles are in flight when the signal comes.
    const llvm = join(root, 'llvm');
    mkdirSync(llvm);
    for (const tool of ['llvm-as', 'llc', 'ld.lld', 'llvm-objdump']) symlinkSync(`/usr/lib/llvm-22/bin/${tool}`, join(llvm, tool));
    writeFileSync(join(llvm, 'opt'), '#!/bin/sh\nexec sleep 60\n', { mode: 0o755 });
    const tmp = join(root, 'tmp');
    mkdirSync(tmp);
    const ccDirs = () => readdirSync(tmp).filter((n) => n.startsWith(TOOLCHAIN_TEMP_PREFIX));
    const start = () =>
      spawn(process.execPath, [bundle, 'compile-all', '--family', 'axpy', '--target', 'gfx950', '--jobs', '2', '--quiet', '--cache-dir', join(root, 'cache')], {
        env: { ...process.env, TMPDIR: tmp, ROCKE_LLVM_DIR: llvm },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
    const orphans: number[] = [];
    const stopWith = async (signal: NodeJS.Signals) => {
      const child = start();
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      for (let i = 0; i < 200 && ccDirs().length < 2; i++) await new Promise((r) => setTimeout(r, 50));
      expect(ccDirs()).toHaveLength(2);
      // The hung tools this run started: a SIGKILLed parent cannot stop them, so the test does.
      const tools = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      child.kill(signal);
      await closed;
      if (signal === 'SIGKILL') orphans.push(...tools);
      return err;
    };
    const err = await stopWith('SIGTERM');
    expect(err).not.toMatch(/\n\s+at /);
    expect(ccDirs()).toEqual([]);
    await stopWith('SIGKILL');
    expect(ccDirs()).toHaveLength(2);
    for (const pid of orphans) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    expect(sweepStaleTempDirs(TOOLCHAIN_TEMP_PREFIX, tmp)).toHaveLength(2);
    expect(ccDirs()).toEqual([]);
  }, 60_000);

  it('a stale dir of a live process is kept, one of a dead process is swept', () => {
    const root = mkdtempSync(join(tmpdir(), 'rocke-sweep-'));
    mkdirSync(join(root, `rocke-ir-${process.pid}-live`));
    mkdirSync(join(root, 'rocke-ir-4194305-dead')); // above Linux's largest pid (2^22)
    mkdirSync(join(root, 'rocke-irx-1-other'));
    expect(sweepStaleTempDirs('rocke-ir-', root)).toEqual([join(root, 'rocke-ir-4194305-dead')]);
    expect(readdirSync(root).sort()).toEqual([`rocke-ir-${process.pid}-live`, 'rocke-irx-1-other']);
  });
});
