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

/** Longest reason line printed: a pasted megabyte of flag value is shown by its start. */
const MAX_REASON_CHARS = 1000;

/**
 * `text` as one printable line: control characters (newlines, escape sequences, DEL, C1) and line
 * separators are written as escapes (`\n`, `\u001b`), and past {@link MAX_REASON_CHARS} it is cut with
 * a count. Every reason the CLI prints goes through this, so a flag value cannot break the line or
 * drive the terminal.
 */
export function oneLine(text: string): string {
  const escaped = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) =>
    c === '\n' ? '\\n' : c === '\r' ? '\\r' : c === '\t' ? '\\t' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return escaped.length > MAX_REASON_CHARS ? `${escaped.slice(0, MAX_REASON_CHARS)}... (${escaped.length - MAX_REASON_CHARS} more characters)` : escaped;
}
