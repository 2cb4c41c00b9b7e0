#!/usr/bin/env node
// Interpreter throughput on the LDS-halo conv (N=1, 16x16, C=K=64, 3x3) for every target atom.
// Run from packages/ir after `npx tsup`:  node bench/interp-bench.mjs [--no-races]
// Each line: best-of-3 CPU time of one whole interpret() call (compile included), instructions executed, throughput.
import { bfloatToBits, getTarget, halfToBits, interpret } from '@rocke/ir';
import { buildConvKernel, convLaunch, referenceConv } from './conv-kernel.mjs';

const shape = { N: 1, H: 16, W: 16, C: 64, K: 64 };
const detectRaces = !process.argv.includes('--no-races');
const cases = [['gfx950', '32x32x16.bf16'], ['gfx950', '16x16x32.f16'], ['gfx942', '32x32x8.bf16'], ['gfx942', '16x16x16.f16'], ['sm_90', '16x8x16.bf16']];

// Small integers keep every product and sum exact, so the check is equality.
const xv = Array.from({ length: shape.N * shape.H * shape.W * shape.C }, (_, i) => ((i * 7) % 5) - 2);
const wv = Array.from({ length: shape.K * 9 * shape.C }, (_, i) => ((i * 3) % 5) - 2);
const ref = referenceConv(xv, wv, shape);

console.log(`conv 3x3 N=${shape.N} ${shape.H}x${shape.W} C=${shape.C} K=${shape.K}, race detection ${detectRaces ? 'on' : 'off'}`);
for (const [tn, atomName] of cases) {
  const t = getTarget(tn);
  const enc = t.atom(atomName).dtype === 'bf16' ? bfloatToBits : halfToBits;
  const x = Uint16Array.from(xv, enc);
  const w = Uint16Array.from(wv, enc);
  const y = new Float32Array(ref.length);
  const m = buildConvKernel(t, atomName);
  const { grid, block } = convLaunch(t, shape);
  const args = [x, w, y, shape.N, shape.H, shape.W, shape.C, shape.K];
  // Best of 3 by CPU time (user + system): the wall clock is unreliable on a shared machine.
  let best;
  for (let rep = 0; rep < 3; rep++) {
    y.fill(NaN);
    const c0 = process.cpuUsage();
    const res = interpret(m, 'conv3x3', { target: t, grid, block, args, detectRaces });
    const c = process.cpuUsage(c0);
    const cpu = (c.user + c.system) / 1e6;
    if (!best || cpu < best.cpu) best = { cpu, res };
  }
  const bad = ref.reduce((n, v, i) => n + (v === y[i] ? 0 : 1), 0);
  const mips = best.res.instructions / best.cpu / 1e6;
  console.log(`${tn.padEnd(7)} ${atomName.padEnd(14)} ${best.cpu.toFixed(3)} s CPU (${best.res.seconds.toFixed(3)} s wall)  ${(best.res.instructions / 1e6).toFixed(2)} M instructions  ${mips.toFixed(1)} M instructions/s  mismatches ${bad}`);
}
