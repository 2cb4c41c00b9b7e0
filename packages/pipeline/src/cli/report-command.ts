import { extname } from 'node:path';
import { renderBenchHtml, renderBenchSvg, summarizeBench, type BenchSummary } from '../bench/bench-report.js';
import type { CliIo } from '../io.js';
import { UsageError } from '../io.js';
import { formatTable } from '../table.js';
import { COMMON_OPTIONS, parse, parseArgs, printJson } from './args.js';
import { checkOutput, readTextInput, writeOutput } from './files.js';

export const REPORT_USAGE = `rocke report ROWS.json --out report.html|report.svg [--title TEXT] [--json]
  Renders benchmark rows ([{shape, class, ours_ms, cudnn_ms, ratio?, variant?, splits?, merge?, kernel?}]
  or {"rows": [...]}) as a bar chart of ratios (cuDNN ms / ours ms) with per-class geometric means.`;

/** Writes the chart for a summary to the output named by `flag`: SVG for `.svg`, else HTML. Returns the absolute path. */
export function writeBenchReport(io: CliIo, flag: string, path: string, summary: BenchSummary, title?: string): string {
  const opts = title === undefined ? {} : { title };
  return writeOutput(io, flag, path, extname(path).toLowerCase() === '.svg' ? renderBenchSvg(summary, opts) : renderBenchHtml(summary, opts));
}

/** Human table of a bench summary. */
export function benchSummaryText(summary: BenchSummary): string {
  const rows = summary.rows.map((r) => [r.shape, r.class, r.ours_ms.toFixed(4), r.cudnn_ms.toFixed(4), r.ratio.toFixed(3), [r.variant, r.splits && `splits ${r.splits}`, r.merge && `gm ${r.merge}`].filter(Boolean).join(' ')]);
  const classes = summary.classes.map((c) => [c.class, c.count, c.geomean.toFixed(3)]);
  return (
    formatTable(['shape', 'class', 'ours ms', 'cuDNN ms', 'ratio', 'chosen'], rows, ['left', 'left', 'right', 'right', 'right', 'left']) +
    '\n' +
    formatTable(['class', 'shapes', 'geomean'], [...classes, ['all', summary.rows.length, summary.overall.toFixed(3)]], ['left', 'right', 'right'])
  );
}

/** `rocke report`. */
export function reportCommand(argv: readonly string[], io: CliIo): number {
  const { values, positionals } = parse('report', () => parseArgs({ args: [...argv], options: { ...COMMON_OPTIONS, out: { type: 'string' }, title: { type: 'string' } }, strict: true, allowPositionals: true }));
  if (values.help) {
    io.stdout(`${REPORT_USAGE}\n`);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('report needs exactly one ROWS.json file');
  if (!values.out) throw new UsageError('report needs --out FILE (.svg or .html)');
  checkOutput(io, '--out', values.out);
  let data: unknown;
  const text = readTextInput(io, 'rows', positionals[0]!);
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`rows ${positionals[0]!} is not JSON: ${(err as Error).message}`);
  }
  const rows = data !== null && typeof data === 'object' && !Array.isArray(data) && 'rows' in data ? (data as { rows: unknown }).rows : data;
  let summary: BenchSummary;
  try {
    summary = summarizeBench(rows);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const outPath = writeBenchReport(io, '--out', values.out, summary, values.title);
  if (values.json) printJson(io, { out: outPath, classes: summary.classes, overall: summary.overall });
  else io.stdout(`${benchSummaryText(summary)}wrote ${outPath}\n`);
  return 0;
}
