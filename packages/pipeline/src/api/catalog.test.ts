import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kernelName, problemGeometry } from '@rocke/conv-direct';
import { openDevice } from '@rocke/hip-runtime';
import { createFakeBinding } from '@rocke/hip-runtime/testing';
import { convForward, randomTensor } from '@rocke/reference';
import { helperSpecs } from '@rocke/split-reduce';
import { RecordStore } from '../cache/records.js';
import { kernelsDir, PROBLEM, recordFor } from '../testing/conv-kernels.js';
import { buildCatalog } from './catalog.js';
import { convRuntime } from '../cli/wiring.js';
import { readCatalog } from './kernel-source.js';
import { openConv } from '../cli/wiring.js';

describe('AOT catalog', () => {
  it('holds the kept code objects, helpers, records and plans; openConv runs from it alone', () => {
    const { dir, dense, kernels } = kernelsDir();
    new RecordStore(dir).put(recordFor(dense[1]));
    const out = join(mkdtempSync(join(tmpdir(), 'rocke-catalog-')), 'catalog');
    const other = { ...PROBLEM, N: 1, H: 5, W: 5 };
    const report = buildCatalog(convRuntime(), dir, 'sm_90', out, [{ name: 'small', problem: PROBLEM }, { name: 'other', problem: other }]);
    expect([report.kernels, report.helpers, report.unplanned]).toEqual([3, helperSpecs('sm_90').length, []]);
    expect(report.plans.map((p) => [p.name, p.chosenBy])).toEqual([['small', 'record'], ['other', 'ranker']]);
    expect(report.plans[0]!.kernelName).toBe(kernelName(dense[1]));
    const catalog = readCatalog(out);
    expect(catalog.records).toHaveLength(1);
    expect(readdirSync(join(out, 'blobs')).length).toBeGreaterThan(0);
    rmSync(dir, { recursive: true, force: true }); // the catalog needs nothing from the cache
    const binding = createFakeBinding({ kernels });
    const device = openDevice({ binding });
    const conv = openConv(PROBLEM, { device, catalog: out });
    expect([conv.choice.chosenBy, conv.choice.kernelName]).toEqual(['record', kernelName(dense[1])]);
    const g = problemGeometry(PROBLEM);
    const x = randomTensor(g.xBytes / 2, 'bf16', 3);
    const w = randomTensor(g.wBytes / 2, 'bf16', 4);
    const y = device.alloc(g.yBytes);
    conv.run(device.upload(x), device.upload(w), y);
    device.synchronize();
    expect(Buffer.from(y.read(new Uint16Array(g.yBytes / 2)).buffer).equals(Buffer.from(convForward(PROBLEM, x, w).y.buffer))).toBe(true);
    expect(binding.calls.filter((c) => /Event|Graph|Capture/.test(c))).toEqual([]);
    const unplanned = openConv(other, { device, catalog: out });
    expect(unplanned.choice.chosenBy).toBe('ranker');
    conv.close();
    unplanned.close();
    device.close();
  });

  it('refuses a non-empty output directory and reports a corrupt catalog', () => {
    const { dir } = kernelsDir();
    const out = mkdtempSync(join(tmpdir(), 'rocke-catalog-'));
    writeFileSync(join(out, 'x'), '');
    expect(() => buildCatalog(convRuntime(), dir, 'sm_90', out)).toThrow(/not empty/);
    const bad = mkdtempSync(join(tmpdir(), 'rocke-catalog-'));
    writeFileSync(join(bad, 'catalog.json'), '{"format":2}');
    expect(() => readCatalog(bad)).toThrow(/bad catalog .*catalog\.json/);
  });
});
