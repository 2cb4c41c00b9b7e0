import { z } from 'zod';

/**
 * One benchmark result row, as `rocke bench` writes it and the report reads it (snake_case so the
 * same JSON comes out of Python baselines). `ratio` is cuDNN time / our time: above 1 we are faster.
 */
export const benchRowSchema = z
  .object({
    shape: z.string().min(1),
    class: z.string().min(1),
    ours_ms: z.number().positive().finite(),
    cudnn_ms: z.number().positive().finite(),
    ratio: z.number().positive().finite().optional(),
    variant: z.string().optional(),
    splits: z.number().int().positive().optional(),
    merge: z.number().int().positive().optional(),
    kernel: z.string().optional(),
  })
  .strict();

/** A validated {@link benchRowSchema} row. */
export type BenchRow = z.infer<typeof benchRowSchema>;

/** A row with its ratio filled in. */
export type RatedBenchRow = BenchRow & { ratio: number };

/** Geometric mean of the ratios of one shape class. */
export interface ClassSummary {
  class: string;
  count: number;
  geomean: number;
}

/** Rows plus per-class geometric means (classes in order of first appearance). */
export interface BenchSummary {
  rows: RatedBenchRow[];
  classes: ClassSummary[];
  /** Geometric mean over all rows. */
  overall: number;
}

/** Geometric mean of positive numbers (exp of the mean log). Throws on an empty list or a value ≤ 0. */
export function geometricMean(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('geometric mean of no values');
  let sum = 0;
  for (const v of values) {
    if (!(v > 0) || !Number.isFinite(v)) throw new RangeError(`geometric mean needs positive finite values, got ${v}`);
    sum += Math.log(v);
  }
  return Math.exp(sum / values.length);
}

/**
 * Validates rows and computes ratios and per-class geometric means. A given `ratio` must agree with
 * `cudnn_ms / ours_ms` to 1e-6 relative, so a report can never show a ratio its times contradict.
 */
export function summarizeBench(input: unknown): BenchSummary {
  const parsed = z.array(benchRowSchema).min(1, 'no benchmark rows').safeParse(input);
  if (!parsed.success) throw new TypeError(`bad benchmark rows: ${z.prettifyError(parsed.error)}`);
  const rows = parsed.data.map((row): RatedBenchRow => {
    const ratio = row.cudnn_ms / row.ours_ms;
    if (row.ratio !== undefined && Math.abs(row.ratio - ratio) > 1e-6 * ratio) {
      throw new TypeError(`row ${row.shape}: ratio ${row.ratio} disagrees with cudnn_ms / ours_ms = ${ratio}`);
    }
    return { ...row, ratio };
  });
  const byClass = new Map<string, number[]>();
  for (const r of rows) byClass.set(r.class, [...(byClass.get(r.class) ?? []), r.ratio]);
  const classes = [...byClass].map(([cls, ratios]) => ({ class: cls, count: ratios.length, geomean: geometricMean(ratios) }));
  return { rows, classes, overall: geometricMean(rows.map((r) => r.ratio)) };
}

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#9c755f'];

/** Number formatted with 3 significant digits, no exponent for report ranges. */
function fmt(v: number): string {
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(v >= 1 ? 2 : 3);
}

/**
 * Bar chart of ratios per shape (log2 axis, 1.0 = parity with cuDNN; bars above the line are
 * faster), grouped by class, followed by one hatched bar per class for its geometric mean.
 * Self-contained SVG text; the same summary always gives the same bytes.
 */
export function renderBenchSvg(summary: BenchSummary, options: { title?: string } = {}): string {
  const title = options.title ?? 'rocke vs cuDNN: speed ratio per shape (cuDNN ms / ours ms)';
  const bars: { label: string; ratio: number; color: string; geomean: boolean; cls: string }[] = [];
  const color = new Map(summary.classes.map((c, i) => [c.class, PALETTE[i % PALETTE.length]!]));
  for (const c of summary.classes) for (const r of summary.rows) if (r.class === c.class) bars.push({ label: r.shape, ratio: r.ratio, color: color.get(c.class)!, geomean: false, cls: c.class });
  for (const c of summary.classes) bars.push({ label: `geomean ${c.class}`, ratio: c.geomean, color: color.get(c.class)!, geomean: true, cls: c.class });

  // Symmetric log2 range in whole powers of two, at least 0.5x..2x.
  const extent = Math.max(1, ...bars.map((b) => Math.ceil(Math.abs(Math.log2(b.ratio)) - 1e-12)));
  const barW = 28;
  const gap = 10;
  const left = 64;
  const top = 48;
  const plotH = 320;
  const labelH = 150;
  const width = left + bars.length * (barW + gap) + gap + 24;
  const height = top + plotH + labelH + 40;
  const y = (ratio: number) => top + plotH / 2 - (Math.log2(ratio) / extent) * (plotH / 2);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`);
  out.push('<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="3" height="6" fill="#ffffff" fill-opacity="0.45"/></pattern></defs>');
  out.push(`<text x="${width / 2}" y="22" text-anchor="middle" font-size="14" font-weight="bold">${esc(title)}</text>`);
  for (let e = -extent; e <= extent; e++) {
    const r = 2 ** e;
    const yy = y(r).toFixed(1);
    out.push(`<line x1="${left}" x2="${width - 16}" y1="${yy}" y2="${yy}" stroke="${e === 0 ? '#333' : '#ddd'}" stroke-width="${e === 0 ? 1.5 : 1}"/>`);
    out.push(`<text x="${left - 6}" y="${yy}" text-anchor="end" dominant-baseline="middle">${esc(fmt(r))}x</text>`);
  }
  bars.forEach((b, i) => {
    const x = left + gap + i * (barW + gap);
    const y0 = y(1);
    const y1 = y(b.ratio);
    const yTop = Math.min(y0, y1);
    const h = Math.max(Math.abs(y1 - y0), 0.5);
    const attrs = `data-shape="${esc(b.label)}" data-class="${esc(b.cls)}" data-ratio="${b.ratio.toFixed(6)}"${b.geomean ? ' data-geomean="true"' : ''}`;
    out.push(`<rect class="bar" x="${x}" y="${yTop.toFixed(2)}" width="${barW}" height="${h.toFixed(2)}" fill="${b.color}" ${attrs}><title>${esc(b.label)}: ${esc(fmt(b.ratio))}x</title></rect>`);
    if (b.geomean) out.push(`<rect x="${x}" y="${yTop.toFixed(2)}" width="${barW}" height="${h.toFixed(2)}" fill="url(#hatch)" stroke="#333"/>`);
    const ty = b.ratio >= 1 ? yTop - 4 : yTop + h + 12;
    out.push(`<text x="${x + barW / 2}" y="${ty.toFixed(1)}" text-anchor="middle" font-size="9">${esc(fmt(b.ratio))}</text>`);
    const lx = x + barW / 2;
    const ly = top + plotH + 10;
    out.push(`<text x="${lx}" y="${ly}" transform="rotate(-60 ${lx} ${ly})" text-anchor="end"${b.geomean ? ' font-weight="bold"' : ''}>${esc(b.label)}</text>`);
  });
  summary.classes.forEach((c, i) => {
    const lx = left + i * 150;
    const ly = height - 14;
    out.push(`<rect x="${lx}" y="${ly - 9}" width="10" height="10" fill="${color.get(c.class)}"/>`);
    out.push(`<text x="${lx + 14}" y="${ly}">${esc(c.class)} (n=${c.count}, geomean ${esc(fmt(c.geomean))}x)</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** An HTML page with the chart inline and a table of every row and class summary. */
export function renderBenchHtml(summary: BenchSummary, options: { title?: string } = {}): string {
  const title = options.title ?? 'rocke vs cuDNN';
  const cell = (v: string | number | undefined) => `<td>${v === undefined ? '' : esc(String(v))}</td>`;
  const rows = summary.rows
    .map((r) => `<tr>${cell(r.shape)}${cell(r.class)}${cell(r.ours_ms.toFixed(4))}${cell(r.cudnn_ms.toFixed(4))}${cell(r.ratio.toFixed(3))}${cell(r.variant)}${cell(r.splits)}${cell(r.merge)}${cell(r.kernel)}</tr>`)
    .join('\n');
  const classes = summary.classes.map((c) => `<tr>${cell(c.class)}${cell(c.count)}${cell(c.geomean.toFixed(3))}</tr>`).join('\n');
  return [
    '<!doctype html>',
    `<html><head><meta charset="utf-8"><title>${esc(title)}</title>`,
    '<style>body{font-family:sans-serif;margin:24px}table{border-collapse:collapse;margin:16px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f4f4f4}</style>',
    '</head><body>',
    `<h1>${esc(title)}</h1>`,
    '<p>ratio = cuDNN time / rocke time; above 1 rocke is faster.</p>',
    renderBenchSvg(summary, { title }),
    '<table><tr><th>shape</th><th>class</th><th>ours ms</th><th>cuDNN ms</th><th>ratio</th><th>variant</th><th>splits</th><th>merge</th><th>kernel</th></tr>',
    rows,
    '</table>',
    '<table><tr><th>class</th><th>shapes</th><th>geomean ratio</th></tr>',
    classes,
    `<tr><td>all</td>${cell(summary.rows.length)}${cell(summary.overall.toFixed(3))}</tr>`,
    '</table>',
    '</body></html>',
    '',
  ].join('\n');
}
