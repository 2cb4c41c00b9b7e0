// Joins rocke bench's JSON rows of a bare run and a fused run (the second with --vs-cudnn, whose
// cuDNN side is cuDNN's conv followed by PyTorch's bias, residual add and activation) by shape:
//   fused/bare   what the epilogue costs our kernel (goal <= 1.05)
//   ops/fused    cuDNN + separate ops over our fused kernel (goal > 1: we are faster)
// Usage: node fused-compare.mjs rows-bare.json rows-fused.json
import { readFileSync } from 'node:fs';

const [bareFile, fusedFile] = process.argv.slice(2);
if (!bareFile || !fusedFile) {
  console.error('usage: node fused-compare.mjs rows-bare.json rows-fused.json');
  process.exit(2);
}
const read = (f) => {
  const v = JSON.parse(readFileSync(f, 'utf8'));
  return Array.isArray(v) ? v : (v.rows ?? []);
};
const bare = new Map(read(bareFile).map((r) => [r.shape, r]));
const fused = read(fusedFile);
const us = (ms) => (ms === undefined ? '-' : (ms * 1000).toFixed(1));
const geomean = (xs) => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);
const rows = [['shape', 'class', 'epilogue', 'bare us', 'fused us', 'fused/bare', 'cuDNN+ops us', 'ops/fused']];
const byClass = new Map();
for (const f of fused) {
  const b = bare.get(f.shape);
  const cost = b ? f.ours_ms / b.ours_ms : undefined;
  const win = f.cudnn_ms !== undefined ? f.cudnn_ms / f.ours_ms : undefined;
  rows.push([f.shape, f.class, f.epilogue ?? '-', us(b?.ours_ms), us(f.ours_ms), cost?.toFixed(3) ?? '-', us(f.cudnn_ms), win?.toFixed(2) ?? '-']);
  const c = byClass.get(f.class) ?? { cost: [], win: [] };
  if (cost !== undefined) c.cost.push(cost);
  if (win !== undefined) c.win.push(win);
  byClass.set(f.class, c);
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
for (const r of rows) console.log(r.map((v, i) => String(v).padEnd(widths[i])).join('  '));
console.log('\nclass geomeans: fused/bare (goal <= 1.05), cuDNN+ops / fused (goal > 1)');
for (const [cls, c] of byClass) {
  console.log(`  ${cls.padEnd(12)} fused/bare ${c.cost.length ? geomean(c.cost).toFixed(3) : '-'} (worst ${c.cost.length ? Math.max(...c.cost).toFixed(3) : '-'})  ops/fused ${c.win.length ? geomean(c.win).toFixed(2) : '-'}x (worst ${c.win.length ? Math.min(...c.win).toFixed(2) : '-'}x)`);
}
const missing = fused.filter((f) => !bare.has(f.shape)).map((f) => f.shape);
if (missing.length) console.log(`no bare row for: ${missing.join(', ')}`);
