#!/usr/bin/env node
// Reference convolution throughput (MAC/s) with 1 and 2 threads, from the built package.
//   cd packages/reference && npx tsup && node bench/throughput.mjs [--repeat N]
// Each figure is the median of N timed runs (default 5) after one warm-up run; the 2-thread output
// is checked to be bit-identical to the 1-thread output.
import { availableParallelism } from 'node:os';
import { convForward, convForwardParallel, makeProblem, problemName, randomTensor } from '../dist/index.js';

const repeatArg = process.argv.indexOf('--repeat');
const repeat = repeatArg > 0 ? Number(process.argv[repeatArg + 1]) : 5;
if (!Number.isInteger(repeat) || repeat < 1) throw new Error('--repeat needs a positive integer');

const shapes = [
  makeProblem({ N: 1, H: 16, W: 16, C: 64, K: 64, R: 3, S: 3, padH: 1, padW: 1, dtype: 'bf16' }),
  makeProblem({ N: 2, H: 28, W: 28, C: 128, K: 128, R: 3, S: 3, padH: 1, padW: 1, dtype: 'fp16' }),
  makeProblem({ N: 1, H: 14, W: 14, C: 512, K: 512, R: 3, S: 3, padH: 1, padW: 1, dtype: 'bf16' }),
  makeProblem({ N: 2, H: 28, W: 28, C: 256, K: 256, R: 3, S: 3, padH: 1, padW: 1, groups: 16, dtype: 'bf16' }),
];

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function time(run) {
  await run(); // warm-up (JIT, worker start-up paths)
  const ms = [];
  let out;
  for (let i = 0; i < repeat; i++) {
    const t0 = performance.now();
    out = await run();
    ms.push(performance.now() - t0);
  }
  return { ms: median(ms), out };
}

console.log(`node ${process.version}, ${availableParallelism()} cores available, median of ${repeat} runs`);
console.log(['problem'.padEnd(42), 'MACs'.padStart(12), 'threads', 'ms'.padStart(9), 'GMAC/s'.padStart(8), 'bits equal'].join('  '));
for (const p of shapes) {
  const x = randomTensor(p.N * p.H * p.W * p.C, p.dtype, 1);
  const w = randomTensor(p.K * p.R * p.S * (p.C / p.groups), p.dtype, 2);
  const one = await time(() => convForward(p, x, w));
  const two = await time(() => convForwardParallel(p, x, w, { threads: 2 }));
  const macs = one.out.geometry.macs;
  const equal = one.out.y32.every((v, i) => Object.is(v, two.out.y32[i]));
  for (const [threads, r] of [[1, one], [2, two]]) {
    console.log(
      [problemName(p).padEnd(42), String(macs).padStart(12), String(threads).padStart(7), r.ms.toFixed(1).padStart(9), (macs / r.ms / 1e6).toFixed(3).padStart(8), threads === 1 ? '' : String(equal)].join('  '),
    );
  }
  if (!equal) process.exitCode = 1;
}
