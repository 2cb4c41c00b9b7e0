import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** File name of the cuDNN baseline script (a copy of ../shared/tools/cudnn_baseline.py). */
export const CUDNN_SCRIPT = 'cudnn_baseline.py';

/** One shape as the baseline script reads it: the planner's `baselineShape`, keyed by `name`. */
export type BaselineShape = Record<string, unknown> & { name: string };

/** cuDNN's median per shape name, from cudnn_baseline.py's output JSON (`rows[].name, ms_median`). */
export function parseCudnnRows(input: unknown): Map<string, number> {
  const rows = (input as { rows?: unknown } | null)?.rows;
  if (!Array.isArray(rows)) throw new TypeError('cuDNN output has no "rows" array');
  const out = new Map<string, number>();
  for (const r of rows as { name?: unknown; ms_median?: unknown }[]) {
    if (typeof r?.name === 'string' && typeof r.ms_median === 'number' && r.ms_median > 0 && Number.isFinite(r.ms_median)) out.set(r.name, r.ms_median);
  }
  return out;
}

/** Where the baseline script is: $ROCKE_CUDNN_BASELINE, else beside the running CLI, else packages/pipeline/device/ under cwd. */
export function findCudnnScript(env: Readonly<Record<string, string | undefined>>, cwd: string, entry = process.argv[1]): string | undefined {
  const candidates = [
    env['ROCKE_CUDNN_BASELINE'],
    entry ? join(dirname(resolve(entry)), CUDNN_SCRIPT) : undefined,
    entry ? join(dirname(resolve(entry)), '..', 'device', CUDNN_SCRIPT) : undefined,
    join(cwd, 'packages', 'pipeline', 'device', CUDNN_SCRIPT),
  ];
  return candidates.find((c): c is string => !!c && existsSync(c));
}

/** Result of {@link runCudnnBaseline}. */
export interface CudnnRun {
  ms: Map<string, number>;
  /** Set when the script could not run or its output could not be read. */
  error?: string;
  raw?: unknown;
}

/**
 * Runs `python3 SCRIPT SUITE OUT` (PYTHONUNBUFFERED, lines streamed to `log`) and reads its
 * medians. Never throws: a missing python3/PyTorch or a crash comes back as `error`.
 */
export function runCudnnBaseline(
  script: string,
  shapes: readonly BaselineShape[],
  workDir: string,
  log: (line: string) => void,
  python = 'python3',
  timeoutMs = 300_000,
  /** Further script arguments (`--epilogue act:b32:res`: time conv + PyTorch's bias, add, activation). */
  args: readonly string[] = [],
): Promise<CudnnRun> {
  const suitePath = join(workDir, 'cudnn-suite.json');
  const outPath = join(workDir, 'cudnn.json');
  writeFileSync(suitePath, `${JSON.stringify({ shapes }, null, 1)}\n`);
  return new Promise((done) => {
    const child = spawn(python, [script, suitePath, outPath, ...args], { env: { ...process.env, PYTHONUNBUFFERED: '1' }, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' });
    let tail = '';
    const lines = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      tail = (tail + text).slice(-2000);
      for (const l of text.split('\n')) if (l.trim()) log(`  cudnn: ${l}`);
    };
    child.stdout.on('data', lines);
    child.stderr.on('data', lines);
    child.on('error', (e) => done({ ms: new Map(), error: `cannot run ${python}: ${e.message}` }));
    child.on('close', (status, signal) => {
      if (status !== 0) {
        done({ ms: new Map(), error: `${python} ${script} ${signal ? `killed by ${signal}` : `exited ${status}`}: ${tail.trim().split('\n').slice(-1)[0] ?? ''}` });
        return;
      }
      try {
        const raw = JSON.parse(readFileSync(outPath, 'utf8'));
        done({ ms: parseCudnnRows(raw), raw });
      } catch (err) {
        done({ ms: new Map(), error: `cannot read ${outPath}: ${(err as Error).message}` });
      }
    });
  });
}
