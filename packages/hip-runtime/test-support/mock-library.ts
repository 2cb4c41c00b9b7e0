// Test-only: builds one of the C stand-ins beside this file into a shared library in a fresh
// temporary directory, with the call log the stand-in appends to. The stand-in reads the log's
// path from its environment variable (MOCK_CUDA_LOG / MOCK_HIP_LOG) on every call.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** True where no C compiler is on PATH: the native mock suites skip themselves. */
export const compilerMissing = spawnSync('cc', ['--version']).status !== 0;

export interface MockLibrary {
  /** The built .so, to hand to ROCKE_CUDA_LIB / ROCKE_HIP_LIB. */
  readonly path: string;
  /** The logged calls, one line each. */
  log(): string[];
  clearLog(): void;
  /** Deletes the temporary directory. */
  remove(): void;
}

/** `defines`: preprocessor symbols for the stand-in (e.g. MOCK_NO_GRAPHS: a driver without graph entry points). */
export function buildMockLibrary(source: 'mock-libcuda.c' | 'mock-libamdhip64.c', logVariable: 'MOCK_CUDA_LOG' | 'MOCK_HIP_LOG', defines: readonly string[] = []): MockLibrary {
  const dir = mkdtempSync(join(tmpdir(), `rocke-${source.replace(/\.c$/, '')}-`));
  const path = join(dir, source.replace(/\.c$/, '.so'));
  execFileSync('cc', ['-shared', '-fPIC', '-O1', ...defines.map((d) => `-D${d}`), '-o', path, join(import.meta.dirname, source)]);
  const logPath = join(dir, 'calls.log');
  writeFileSync(logPath, '');
  process.env[logVariable] = logPath;
  return {
    path,
    log: () => readFileSync(logPath, 'utf8').trim().split('\n'),
    clearLog: () => writeFileSync(logPath, ''),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
