import { describe, expect, it } from 'vitest';
import { geometricMean, renderBenchHtml, renderBenchSvg, summarizeBench } from './bench-report.js';

const rows = [
  { shape: 'sm_7x7_512', class: 'small-map', ours_ms: 0.05, cudnn_ms: 0.1, variant: 'split_c', splits: 4 },
  { shape: 'sm_14x14_1024', class: 'small-map', ours_ms: 0.2, cudnn_ms: 0.1, variant: 'split_c', splits: 2 },
  { shape: 'g_56_c128_g32', class: 'grouped', ours_ms: 1, cudnn_ms: 3, ratio: 3, variant: 'grouped', merge: 4 },
  { shape: 'd<&>"x', class: 'dense', ours_ms: 2, cudnn_ms: 1.5 },
];

function bars(svg: string) {
  return [...svg.matchAll(/<rect class="bar" x="[\d.]+" y="([\d.]+)" width="\d+" height="([\d.]+)" fill="[^"]+" data-shape="([^"]*)" data-class="([^"]*)" data-ratio="([\d.]+)"( data-geomean="true")?/g)].map((m) => ({
    y: Number(m[1]),
    h: Number(m[2]),
    shape: m[3]!,
    cls: m[4]!,
    ratio: Number(m[5]),
    geomean: m[6] !== undefined,
  }));
}

describe('benchmark report', () => {
  it('computes geometric means', () => {
    expect(geometricMean([2, 8])).toBeCloseTo(4, 12);
    expect(geometricMean([0.5, 2, 1])).toBeCloseTo(1, 12);
    expect(() => geometricMean([])).toThrow(/no values/);
    expect(() => geometricMean([1, 0])).toThrow(/positive/);
  });

  it('summarizes ratios (cuDNN / ours) and per-class geometric means in first-seen order', () => {
    const s = summarizeBench(rows);
    expect(s.rows.map((r) => r.ratio)).toEqual([2, 0.5, 3, 0.75]);
    expect(s.classes.map((c) => [c.class, c.count])).toEqual([
      ['small-map', 2],
      ['grouped', 1],
      ['dense', 1],
    ]);
    expect(s.classes[0]!.geomean).toBeCloseTo(1, 12);
    expect(s.classes[1]!.geomean).toBeCloseTo(3, 12);
    expect(s.classes[2]!.geomean).toBeCloseTo(0.75, 12);
    expect(s.overall).toBeCloseTo((2 * 0.5 * 3 * 0.75) ** 0.25, 12);
  });

  it('rejects rows whose ratio contradicts their times, and malformed rows', () => {
    expect(() => summarizeBench([{ ...rows[0], ratio: 0.5 }])).toThrow(/disagrees/);
    expect(() => summarizeBench([{ ...rows[0], ours_ms: 0 }])).toThrow(/ours_ms/);
    expect(() => summarizeBench([{ ...rows[0], extra: 1 }])).toThrow(/extra/);
    expect(() => summarizeBench([])).toThrow(/no benchmark rows/);
  });

  it('draws one bar per shape plus one per class geomean, on a log axis around parity', () => {
    const svg = renderBenchSvg(summarizeBench(rows));
    const b = bars(svg);
    expect(b.map((x) => [x.shape, x.geomean])).toEqual([
      ['sm_7x7_512', false],
      ['sm_14x14_1024', false],
      ['g_56_c128_g32', false],
      ['d&lt;&amp;&gt;&quot;x', false],
      ['geomean small-map', true],
      ['geomean grouped', true],
      ['geomean dense', true],
    ]);
    // Heights are proportional to |log2 ratio|: 2x and 0.5x are equally tall, on opposite sides.
    const [up, down, three] = b;
    expect(up!.h).toBeCloseTo(down!.h, 1);
    expect(up!.y + up!.h).toBeCloseTo(down!.y, 1);
    expect(three!.h / up!.h).toBeCloseTo(Math.log2(3), 2);
    expect(svg).not.toMatch(/d<&>/);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
  });

  it('is deterministic and self-contained', () => {
    const a = renderBenchHtml(summarizeBench(rows));
    expect(renderBenchHtml(summarizeBench(rows))).toBe(a);
    expect(a.match(/https?:\/\/[^"\s]*/g)).toEqual(['http://www.w3.org/2000/svg']);
    expect(a).toContain('<td>g_56_c128_g32</td><td>grouped</td><td>1.0000</td><td>3.0000</td><td>3.000</td><td>grouped</td><td></td><td>4</td>');
    expect(a).toContain('<td>all</td><td>4</td>');
  });
});
