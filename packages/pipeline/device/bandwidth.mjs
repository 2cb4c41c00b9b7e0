#!/usr/bin/env node
// Achieved bandwidth per shape of a bench run, for memory-bound shapes (depthwise):
//   node packages/pipeline/device/bandwidth.mjs OUT/rows.json SUITE.json [PEAK_GBPS = 4300]
// rows.json is bench.sh's output (ours_ms, cudnn_ms per shape); SUITE.json the suite it ran
// (.device/bundle/public.json). Bytes are the compulsory traffic, conv-direct's
// problemGeometry().bytes: 2 * (N*H*W*C + K*R*S*C/groups + N*Ho*Wo*K) for 16-bit x, w, y, each
// read or written once. GB/s = bytes / time; the table gives ours and cuDNN's, their share of the
// peak, the ratio cuDNN/ours and the geometric mean of the ratios.
import { readFileSync } from 'node:fs';

const [rowsFile, suiteFile, peakArg] = process.argv.slice(2);
if (!rowsFile || !suiteFile) {
  console.error('usage: bandwidth.mjs ROWS.json SUITE.json [PEAK_GBPS]');
  process.exit(2);
}
const peak = Number(peakArg ?? 4300);
const rows = JSON.parse(readFileSync(rowsFile, 'utf8'));
const shapes = new Map(JSON.parse(readFileSync(suiteFile, 'utf8')).shapes.map((s) => [s.name, s]));
const extent = (input, filter, stride, pad) => Math.floor((input + 2 * pad - filter) / stride) + 1;
const lines = [['shape', 'ours us', 'ours GB/s', '% peak', 'cuDNN us', 'cuDNN GB/s', 'ratio', 'kernel'].join('\t')];
const ratios = [];
for (const row of rows) {
  const s = shapes.get(row.shape);
  if (!s) continue;
  const Ho = extent(s.H, s.R, s.stride, s.pad);
  const Wo = extent(s.W, s.S, s.stride, s.pad);
  const bytes = 2 * (s.N * s.H * s.W * s.C + s.K * s.R * s.S * (s.C / s.groups) + s.N * Ho * Wo * s.K);
  const gbps = (ms) => bytes / (ms * 1e-3) / 1e9;
  const ratio = row.cudnn_ms !== undefined ? row.cudnn_ms / row.ours_ms : undefined;
  if (ratio !== undefined) ratios.push(ratio);
  lines.push(
    [
      row.shape,
      (row.ours_ms * 1e3).toFixed(1),
      gbps(row.ours_ms).toFixed(0),
      ((100 * gbps(row.ours_ms)) / peak).toFixed(0),
      row.cudnn_ms === undefined ? '-' : (row.cudnn_ms * 1e3).toFixed(1),
      row.cudnn_ms === undefined ? '-' : gbps(row.cudnn_ms).toFixed(0),
      ratio === undefined ? '-' : `${ratio.toFixed(2)}x`,
      `${row.variant} ${row.kernel}`,
    ].join('\t'),
  );
}
console.log(lines.join('\n'));
if (ratios.length) {
  const geo = Math.exp(ratios.reduce((a, r) => a + Math.log(r), 0) / ratios.length);
  console.log(`geometric mean ${geo.toFixed(2)}x over ${ratios.length} shapes; min ${Math.min(...ratios).toFixed(2)}x`);
}
