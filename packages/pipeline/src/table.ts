/** Column alignment for {@link formatTable}. */
export type Align = 'left' | 'right';

/**
 * Formats rows as a plain-text table: a header row, a dashed rule, then the rows; columns padded to
 * their widest cell. Numbers are right-aligned unless `align` says otherwise.
 */
export function formatTable(headers: readonly string[], rows: readonly (readonly (string | number | null | undefined)[])[], align?: readonly Align[]): string {
  const text = rows.map((r) => headers.map((_, i) => cellText(r[i])));
  const aligns = headers.map((_, i) => align?.[i] ?? (rows.length > 0 && rows.every((r) => typeof r[i] === 'number') ? 'right' : 'left'));
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (aligns[i] === 'right' ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...text.map(line)].join('\n') + '\n';
}

function cellText(v: string | number | null | undefined): string {
  if (v === null || v === undefined) return '';
  return String(v);
}

/** Formats a byte count with a binary unit (B, KiB, MiB, GiB). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = -1;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v >= 100 ? 0 : 1)} ${units[u]}`;
}

/** Formats milliseconds as `850 ms` or `12.3 s`. */
export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * One line that says what went wrong: the first line mentioning "error" (a tool's diagnostic),
 * else the first line. Tool errors start with the full command line, which says little.
 */
export function briefError(message: string): string {
  const lines = message.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.find((l) => /\berror\b/i.test(l) && !/ failed( \(exit \d+\))?:$/.test(l)) ?? lines[0] ?? '';
}
