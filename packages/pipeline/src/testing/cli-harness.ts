// Test helper: runs the CLI's main() in-process with captured output and a private cache.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliDeps } from '../cli/deps.js';
import type { CliIo } from '../io.js';
import { main } from '../cli/main.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  json<T = unknown>(): T;
}

export function cliHarness(options: { tty?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'rocke-cli-test-'));
  const cacheDir = join(dir, 'cache');
  const run = async (argv: string[], deps?: Partial<CliDeps>): Promise<CliRun> => {
    let stdout = '';
    let stderr = '';
    const io: CliIo = {
      stdout: (t) => void (stdout += t),
      stderr: (t) => void (stderr += t),
      stderrIsTTY: options.tty ?? false,
      columns: 100,
      env: { ROCKE_CACHE_DIR: cacheDir },
      cwd: dir,
    };
    const code = await main(argv, io, deps);
    return { code, stdout, stderr, json: <T>() => JSON.parse(stdout) as T };
  };
  return { dir, cacheDir, run };
}
