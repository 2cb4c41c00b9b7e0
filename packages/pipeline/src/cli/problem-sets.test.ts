// Problem sets on the command line: --suite and --miopen-file in plan, compile-all and bench, and
// `rocke plan --target all` rows (valid count, chosen kernel, or the decisive reason).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliHarness } from '../testing/cli-harness.js';
import type { PlanRow } from './plan-command.js';
import { readMiopenFile } from './problem-input.js';

/** What MIOPEN_ENABLE_LOGGING_CMD=1 writes, among other log lines. */
const LOG = [
  'MIOpen(HIP): Info [GetAllConfigs] ...',
  'MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convbfp16 -n 1 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1',
  'MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convbfp16 -n 1 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1',
  'MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convbfp16 -n 1 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 2 -t 1',
  'MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver conv -n 1 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -g 1 -F 1',
  'convfp16 -n 2 -c 128 -H 28 -W 28 -k 128 -y 1 -x 1 -g 1',
  '',
  'some other line',
].join('\n');

describe('readMiopenFile', () => {
  it('keeps each forward fp16/bf16 problem once and counts what it skipped', () => {
    const r = readMiopenFile(LOG);
    expect(r.problems.map((p) => [p.name, p.problem.C, p.problem.dtype])).toEqual([
      ['line2', 64, 'bf16'],
      ['line6', 128, 'fp16'],
    ]);
    expect([r.lines, r.otherLines, r.repeats]).toEqual([8, 3, 1]);
    expect(r.unsupported).toEqual([
      { reason: "-F 2 selects a backward direction; conv-direct implements forward only (-F 1)", count: 1 },
      { reason: "operation 'conv': fp32 is not supported (use convfp16 or convbfp16)", count: 1 },
    ]);
  });

  it('is a usage error when no command is supported, saying what was skipped', () => {
    expect(() => readMiopenFile('hello\nMIOpenDriver conv -n 1 -c 3 -H 8 -W 8 -k 8\n')).toThrow(
      "no supported MIOpenDriver conv command in 2 lines (1 other lines; unsupported: operation 'conv': fp32 is not supported (use convfp16 or convbfp16) (1x))",
    );
  });
});

describe('problem sets in the CLI', () => {
  const { run, dir } = cliHarness();
  const suite = join(import.meta.dirname, '..', '..', 'device', 'public.json');

  it('plan --suite --target all --json: one row per shape and target, in one process', async () => {
    const started = Date.now();
    const r = await run(['plan', '--suite', suite, '--target', 'all', '--json']);
    const rows = r.json<{ rows: PlanRow[] }>().rows;
    expect(rows).toHaveLength(24 * 3);
    expect(rows.slice(0, 3).map((row) => [row.name, row.target])).toEqual([
      ['sm_7x7_512', 'gfx950'],
      ['sm_7x7_512', 'gfx942'],
      ['sm_7x7_512', 'sm_90'],
    ]);
    for (const row of rows) {
      expect(row.valid > 0).toBe(row.chosen !== null);
      expect(row.reason === null).toBe(row.chosen !== null);
    }
    expect(r.code).toBe(rows.every((row) => row.chosen) ? 0 : 2);
    // Shared grids and kept spec facts (conv-direct README, "Searching many problems"): about 6 s
    // of CPU on the shared 2-core machine (9 s without them); the bound leaves room for a CI
    // machine three times slower and loaded.
    expect(Date.now() - started).toBeLessThan(45_000);
  });

  it('plan --miopen-file: rows for the log problems, a note on stderr; an unserved one is exit 2 with its reason', async () => {
    writeFileSync(join(dir, 'log.txt'), `${LOG}\nMIOpenDriver convbfp16 -n 1 -c 64 -H 56 -W 56 -k 64 -y 101 -x 101 -p 50 -q 50\n`);
    const r = await run(['plan', '--miopen-file', 'log.txt', '--target', 'sm_90', '--json']);
    const rows = r.json<{ rows: PlanRow[] }>().rows;
    expect(rows.map((row) => row.name)).toEqual(['line2', 'line6', 'line9']);
    expect(rows[2]).toMatchObject({ valid: 0, chosen: null, reason: expect.stringMatching(/^no valid dense candidate on sm_90: LDS \d+ bytes exceed/) });
    expect(r.code).toBe(2);
    expect(r.json<{ note: string }>().note).toContain('log.txt: 3 problems from 9 lines; skipped 3 other lines, 1 repeated problems, 1 unsupported (-F 2 selects');
    expect(r.stderr).toContain('rocke plan: 1 of 3 shape/target rows have no plan; first: line9 on sm_90: no valid dense candidate on sm_90');
  });

  it('compile-all and bench take --miopen-file too, and refuse mixing it with a suite or a problem', async () => {
    writeFileSync(join(dir, 'one.txt'), 'MIOpenDriver convbfp16 -n 1 -c 64 -H 56 -W 56 -k 64 -y 101 -x 101 -p 50 -q 50\n');
    const compile = await run(['compile-all', '--miopen-file', 'one.txt', '--quiet']);
    expect(compile.code).toBe(2);
    expect(compile.stderr).toMatch(/no valid candidate for line1 \(.*\) on gfx950: no valid dense candidate on gfx950: LDS/);
    const bench = await run(['bench', '--miopen-file', 'one.txt', '--target', 'sm_90']);
    expect(bench.code).toBe(2);
    const mixed = await run(['plan', '--miopen-file', 'one.txt', '--suite', suite]);
    expect([mixed.code, mixed.stderr]).toEqual([2, 'rocke: give one of --suite, --miopen-file or a problem (got --suite and --miopen-file) (rocke --help for usage)\n']);
  });
});
