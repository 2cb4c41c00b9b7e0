/**
 * The cost model's coefficients against the committed H200 rows (ranker/h200-rows.json): the
 * committed coefficients are the deterministic fit of those rows, and on shapes (and whole classes
 * of shapes) held out of the fit the model's pick stays near the measured best.
 *
 * This file is also the fitting script:
 *   ROCKE_RANKER_DETAILS=path/bench-details.json   strips a `rocke bench` run into h200-rows.json
 *   ROCKE_FIT_RANKER=1                             refits and rewrites model.generated.ts
 *   ROCKE_RANKER_EVAL=path/tune-details.json       the committed model's pick per shape of another run
 *                                                  (e.g. device/tune.sh's) against its measured best
 * e.g. `ROCKE_RANKER_DETAILS=/tmp/bench-details.json ROCKE_FIT_RANKER=1 npx vitest run src/ranker/fit.test.ts`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { evaluateRanker, fitRanker, generatedModelSource, leaveOneClassOut, leaveOneShapeOut, RankerRowsSchema, rowsFromBenchDetails, type Evaluation } from './fit.js';
import { defaultRankerModel } from './model.js';

const dir = import.meta.dirname;
const rowsFile = join(dir, 'h200-rows.json');
const modelFile = join(dir, 'model.generated.ts');

const details = process.env['ROCKE_RANKER_DETAILS'];
if (details) {
  const rows = rowsFromBenchDetails(JSON.parse(readFileSync(details, 'utf8')), {
    device: process.env['ROCKE_RANKER_DEVICE'] ?? 'NVIDIA H200',
    target: 'sm_90',
    source: process.env['ROCKE_RANKER_SOURCE'] ?? 'rocke bench --verify over the public suite (packages/pipeline/device/bench.sh)',
  });
  writeFileSync(rowsFile, `${JSON.stringify(rows, null, 1)}\n`);
}
const rows = existsSync(rowsFile) ? RankerRowsSchema.parse(JSON.parse(readFileSync(rowsFile, 'utf8'))) : undefined;
if (rows && process.env['ROCKE_FIT_RANKER'] === '1') writeFileSync(modelFile, generatedModelSource(fitRanker(rows)));

function print(title: string, e: Evaluation): void {
  for (const s of e.shapes) {
    console.log(`${title} ${s.shape.padEnd(18)} ${s.cls.padEnd(10)} ${s.ratio.toFixed(3)}x of best, best is #${String(s.bestRank).padEnd(3)} ${s.chosen}${s.chosenSplits > 1 ? ` s${s.chosenSplits}` : ''}`);
  }
  console.log(`${title}: geomean ${e.geomean.toFixed(3)}x, worst ${e.worst.toFixed(3)}x over ${e.shapes.length} shapes; ${e.shapes.filter((s) => s.ratio <= 1.1).length} within 10%, ${e.shapes.filter((s) => s.ratio <= 1.25).length} within 25%`);
}

describe.skipIf(!rows)('the cost model on the committed H200 rows', () => {
  it('the committed coefficients are the fit of the committed rows, and the fit is deterministic', () => {
    const fit = JSON.stringify(fitRanker(rows!));
    expect(JSON.stringify(fitRanker(structuredClone(rows!)))).toBe(fit);
    expect(JSON.stringify(defaultRankerModel())).toBe(fit);
  });

  it('leave-one-shape-out: the pick for a shape the fit never saw is near its measured best', () => {
    const e = leaveOneShapeOut(rows!);
    print('held-out shape', e);
    expect(e.shapes.length).toBe(rows!.shapes.length);
    // As committed (24 shapes of 2026-12-03): geomean 1.05x, worst 1.48x. A worse model fails here.
    expect(e.geomean).toBeLessThan(1.07);
    expect(e.shapes.filter((s) => s.ratio <= 1.1).length).toBeGreaterThanOrEqual(19);
    // The bench order is this model's: a cap of 6 keeps the measured winner of most shapes.
    console.log(`held-out shape: the measured best is within the first 6 of the order on ${e.shapes.filter((s) => s.bestRank <= 6).length} of ${e.shapes.length} shapes`);
    expect(e.shapes.filter((s) => s.bestRank <= 6).length).toBeGreaterThanOrEqual(18);
  });

  it('leave-one-class-out: whole classes (pointwise, depthwise, grouped, small-map, dense) held out together', () => {
    const e = leaveOneClassOut(rows!);
    print('held-out class', e);
    expect(e.geomean).toBeLessThan(1.08);
  });
});

const evalFile = process.env['ROCKE_RANKER_EVAL'];
describe.skipIf(!evalFile)('the committed model on another run (ROCKE_RANKER_EVAL)', () => {
  it('reports its pick against the measured best per shape, held-out shapes marked', () => {
    const model = defaultRankerModel();
    const other = rowsFromBenchDetails(JSON.parse(readFileSync(evalFile!, 'utf8')), { device: 'H200', target: 'sm_90', source: evalFile! });
    const r = evaluateRanker(other, model);
    const seen = new Set(model.source.shapes);
    for (const s of r.shapes) console.log(`${seen.has(s.shape) ? 'fitted  ' : 'held out'} ${s.shape.padEnd(18)} ${s.ratio.toFixed(3)}x of best  ${s.chosen}`);
    const held = r.shapes.filter((s) => !seen.has(s.shape));
    const g = (xs: typeof held) => 2 ** (xs.reduce((a, s) => a + Math.log2(s.ratio), 0) / Math.max(1, xs.length));
    console.log(`all: geomean ${r.geomean.toFixed(3)}x, worst ${r.worst.toFixed(3)}x; held out (${held.length}): geomean ${g(held).toFixed(3)}x, worst ${Math.max(1, ...held.map((s) => s.ratio)).toFixed(3)}x`);
    expect(r.shapes.length).toBe(other.shapes.length);
  });
});
