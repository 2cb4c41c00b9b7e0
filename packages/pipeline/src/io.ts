/** Where the CLI reads and writes; tests pass their own to run `main` in-process. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Draw a progress bar on stderr (else plain progress lines). */
  stderrIsTTY: boolean;
  columns?: number | undefined;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /** Aborted on Ctrl-C: long commands stop cleanly and keep finished work. */
  signal?: AbortSignal | undefined;
}

/** A usage error: bad flags, unknown subcommand, bad problem. `main` prints it and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
