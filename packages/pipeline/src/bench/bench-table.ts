import { formatTable } from '../table.js';
import { geometricMean } from './bench-report.js';
import type { ShapeResult } from './bench-shape.js';

/** One line of the per-shape table and the JSON rows. */
export interface BenchLine {
  shape: string;
  class: string;
  result: ShapeResult;
  cudnnMs?: number;
  ratio?: number;
}

/** Formats µs with one decimal. */
export const us = (ms: number | undefined) => (ms === undefined ? '-' : (ms * 1000).toFixed(1));

/** The per-shape table and the per-class geometric means of the ratios. */
export function benchTable(lines: readonly BenchLine[]): string {
  const rows = lines.map((l) => {
    const b = l.result.best;
    const verify = l.result.status !== 'ok' ? `FAILED: ${l.result.reason ?? ''}`.slice(0, 80) : b?.verify ? `${b.verify.pass ? 'pass' : 'FAIL'} (${b.verify.mode})` : 'not verified';
    const failedOthers = l.result.candidates.filter((c) => c.verify && !c.verify.pass).length;
    return [
      l.shape,
      l.class,
      b?.kernelName.replace(/^rocke_direct_/, '') ?? '-',
      b?.variant ?? '-',
      b?.splits ? `s${b.splits}` : b?.merge ? `gm${b.merge}` : '-',
      us(b?.medianMs),
      us(l.cudnnMs),
      l.ratio === undefined ? '-' : `${l.ratio.toFixed(2)}x`,
      `${verify}${failedOthers ? `; ${failedOthers} other candidate(s) FAILED` : ''}`,
    ];
  });
  let text = formatTable(['shape', 'class', 'best kernel', 'variant', 'splits/merge', 'ours us', 'cuDNN us', 'ratio', 'verify'], rows, ['left', 'left', 'left', 'left', 'left', 'right', 'right', 'right', 'left']);
  const byClass = new Map<string, number[]>();
  for (const l of lines) if (l.ratio !== undefined) byClass.set(l.class, [...(byClass.get(l.class) ?? []), l.ratio]);
  if (byClass.size) {
    text += `\ngeometric mean of cuDNN / ours (above 1: we are faster)\n`;
    text += formatTable(['class', 'shapes', 'geomean'], [...byClass].map(([c, r]) => [c, r.length, `${geometricMean(r).toFixed(3)}x`]), ['left', 'right', 'right']);
    const all = [...byClass.values()].flat();
    text += `\noverall: ${geometricMean(all).toFixed(3)}x over ${all.length} shapes\n`;
  }
  return text;
}

