#!/usr/bin/env node
// Per-shape speed report of a bench run against cuDNN and against the roofline, on the GPU machine or here:
//   node packages/pipeline/device/roofline.mjs ROWS.json SUITE.json [BEFORE_ROWS.json]
// ROWS.json is `rocke bench --json` output (bench.sh's rows.json: ours_ms, cudnn_ms per shape), SUITE.json
// the suite it ran. The roofline is max(flops / PEAK_TFLOPS, bytes / PEAK_GBPS): flops = 2·N·Ho·Wo·K·R·S·C/groups,
// bytes the compulsory traffic 2·(N·H·W·C + K·R·S·C/groups + N·Ho·Wo·K) of 16-bit x, w and y, each moved
// once. The peaks default to the H200's dense bf16 790 TFLOP/s and HBM3e 4.3 TB/s (env PEAK_TFLOPS,
// PEAK_GBPS for another machine). With BEFORE_ROWS.json (a run of older code in the same command) the
// table shows both. A suite with `counts` (layer occurrences in a network, as in zoo-public.json) also
// gets per network (the shape name without its `_L<n>` suffix): layers with a kernel, and the network's
// conv time Σ count × time, ours vs cuDNN.
import { readFileSync } from 'node:fs';

const [rowsFile, suiteFile, beforeFile] = process.argv.slice(2);
if (!rowsFile || !suiteFile) {
  console.error('usage: roofline.mjs ROWS.json SUITE.json [BEFORE_ROWS.json]');
  process.exit(2);
}
const PEAK_FLOPS = Number(process.env.PEAK_TFLOPS ?? 790) * 1e12;
const PEAK_BYTES = Number(process.env.PEAK_GBPS ?? 4300) * 1e9;
const readRows = (file) => {
  const parsed = JSON.parse(readFileSync(file, 'utf8'));
  return new Map((Array.isArray(parsed) ? parsed : parsed.rows).map((r) => [r.shape, r]));
};
const suite = JSON.parse(readFileSync(suiteFile, 'utf8'));
const rows = readRows(rowsFile);
const before = beforeFile ? readRows(beforeFile) : null;
// The extent, flops and bytes restate conv-direct's problemGeometry: this script runs on the GPU machine
// with plain node and no packages installed (only the bundled CLI is there).
const extent = (input, filter, stride, pad, dilation) => Math.floor((input + 2 * pad - dilation * (filter - 1) - 1) / stride) + 1;

function cost(s) {
  const stride = s.stride ?? 1;
  const pad = s.pad ?? 0;
  const groups = s.groups ?? 1;
  const Ho = extent(s.H, s.R, s.strideH ?? stride, s.padH ?? pad, s.dilationH ?? s.dilation ?? 1);
  const Wo = extent(s.W, s.S, s.strideW ?? stride, s.padW ?? pad, s.dilationW ?? s.dilation ?? 1);
  const cpg = s.C / groups;
  const flops = 2 * s.N * Ho * Wo * s.K * s.R * s.S * cpg;
  const bytes = 2 * (s.N * s.H * s.W * s.C + s.K * s.R * s.S * cpg + s.N * Ho * Wo * s.K);
  return { flops, bytes, roofMs: Math.max(flops / PEAK_FLOPS, bytes / PEAK_BYTES) * 1e3 };
}

const us = (ms) => (ms === undefined ? '-' : (ms * 1e3).toFixed(1));
const x = (v) => (v === undefined || !Number.isFinite(v) ? '-' : `${v.toFixed(2)}x`);
const geomean = (vs) => (vs.length ? Math.exp(vs.reduce((a, v) => a + Math.log(v), 0) / vs.length) : undefined);

const header = ['shape', 'class', 'ours us', 'cuDNN us', 'cuDNN/ours', 'roof us', 'ours/roof', 'cuDNN/roof', 'ours GB/s'];
if (before) header.push('before us', 'before cuDNN/ours');
header.push('kernel');
const table = [header];
const byClass = new Map();
const networks = new Map();
for (const s of suite.shapes) {
  const r = rows.get(s.name);
  const b = before?.get(s.name);
  const { bytes, roofMs } = cost(s);
  const ratio = r?.ours_ms && r?.cudnn_ms ? r.cudnn_ms / r.ours_ms : undefined;
  const beforeRatio = b?.ours_ms && (b?.cudnn_ms ?? r?.cudnn_ms) ? (b.cudnn_ms ?? r.cudnn_ms) / b.ours_ms : undefined;
  const cls = s.cls ?? r?.class ?? '-';
  const c = byClass.get(cls) ?? { after: [], before: [], min: Infinity, shapes: 0, ours: 0 };
  c.shapes += 1;
  if (ratio !== undefined) {
    c.after.push(ratio);
    c.min = Math.min(c.min, ratio);
  }
  if (beforeRatio !== undefined) c.before.push(beforeRatio);
  byClass.set(cls, c);
  const line = [
    s.name,
    cls,
    us(r?.ours_ms),
    us(r?.cudnn_ms),
    x(ratio),
    us(roofMs),
    x(r?.ours_ms ? r.ours_ms / roofMs : undefined),
    x(r?.cudnn_ms ? r.cudnn_ms / roofMs : undefined),
    r?.ours_ms ? (bytes / (r.ours_ms * 1e-3) / 1e9).toFixed(0) : '-',
  ];
  if (before) line.push(us(b?.ours_ms), x(beforeRatio));
  line.push(r ? `${r.variant ?? ''} ${r.kernel ?? ''}`.trim() : 'no kernel');
  table.push(line);
  const count = suite.counts?.[s.name];
  if (count !== undefined) {
    const net = s.name.replace(/_L\d+$/, '');
    const n = networks.get(net) ?? { layers: 0, covered: 0, ours: 0, cudnnCovered: 0, cudnnAll: 0, missingCudnn: 0 };
    n.layers += 1;
    if (r?.cudnn_ms !== undefined) n.cudnnAll += count * r.cudnn_ms;
    else n.missingCudnn += 1;
    if (r?.ours_ms !== undefined) {
      n.covered += 1;
      n.ours += count * r.ours_ms;
      if (r.cudnn_ms !== undefined) n.cudnnCovered += count * r.cudnn_ms;
    }
    networks.set(net, n);
  }
}
const widths = header.map((_, i) => Math.max(...table.map((row) => String(row[i]).length)));
for (const row of table) console.log(row.map((cell, i) => String(cell).padEnd(widths[i])).join('  ').trimEnd());
console.log(`\nper class: geometric mean of cuDNN time / ours (above 1: we are faster)${before ? ', before -> after' : ''}`);
for (const [cls, c] of byClass) {
  const tail = before ? `before ${x(geomean(c.before))} -> after ${x(geomean(c.after))}` : x(geomean(c.after));
  console.log(`  ${cls.padEnd(10)} ${String(c.shapes).padStart(3)} shapes, ${String(c.after.length).padStart(3)} timed: ${tail}, min ${x(c.min)}`);
}
if (networks.size) {
  console.log('\nper network: layers with a kernel; conv time Σ count × time (ms) over those layers, ours vs cuDNN; cuDNN over all layers');
  for (const [net, n] of networks) {
    console.log(
      `  ${net.padEnd(24)} ${n.covered}/${n.layers} layers  ours ${n.ours.toFixed(3)}  cuDNN ${n.cudnnCovered.toFixed(3)}  ` +
        `(${x(n.cudnnCovered / n.ours)})  cuDNN all layers ${n.cudnnAll.toFixed(3)}${n.missingCudnn ? ` (${n.missingCudnn} without a cuDNN time)` : ''}`,
    );
  }
}
