import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { problemGeometry } from '@rocke/conv-direct';
import { createFakeBinding } from '@rocke/hip-runtime/testing';
import { randomTensor } from '@rocke/reference';
import { describe, expect, it } from 'vitest';
import { readNpy, writeNpy } from '../npy.js';
import { cliHarness } from '../testing/cli-harness.js';
import { kernelsDir, PROBLEM } from '../testing/conv-kernels.js';
import { gpuRunConv } from './wiring.js';

// rocke run --device gpu with the epilogue flags, through openConv over a fused kernels directory on
// hip-runtime's fake binding (kernel bodies that do what the compiled kernels do), against --device cpu.
describe('rocke run --device gpu with a fused epilogue (fake binding)', () => {
  const epilogue = { act: 'gelu', bias: 'dtype', residual: true } as const;
  const g = problemGeometry(PROBLEM);

  function setup(kernelsEpilogue: typeof epilogue | undefined) {
    const harness = cliHarness();
    const { dir, kernels } = kernelsDir(undefined, kernelsEpilogue);
    const npy = (name: string, shape: number[], data: Uint16Array | Float32Array) => writeFileSync(join(harness.dir, name), writeNpy({ dtype: data instanceof Float32Array ? 'float32' : 'uint16', shape, data }));
    npy('x.npy', [PROBLEM.N, PROBLEM.H, PROBLEM.W, PROBLEM.C], randomTensor(g.xBytes / 2, 'bf16', 1));
    npy('w.npy', [PROBLEM.K, PROBLEM.R, PROBLEM.S, PROBLEM.C], randomTensor(g.wBytes / 2, 'bf16', 2));
    npy('b.npy', [PROBLEM.K], randomTensor(PROBLEM.K, 'bf16', 3));
    npy('r.npy', [PROBLEM.N, g.Ho, g.Wo, PROBLEM.K], randomTensor(g.yBytes / 2, 'bf16', 4));
    const binding = createFakeBinding({ kernels });
    const run = (device: 'gpu' | 'cpu', out: string) =>
      harness.run(['run', '--x', 'x.npy', '--w', 'w.npy', '--out', out, '--device', device, '--cache-dir', dir, '--act', 'gelu', '--alpha', '0.75', '--bias', 'b.npy', '--residual', 'r.npy', '--beta=-1'], {
        runConv: (request, io) => gpuRunConv(request, io, { binding }),
      });
    return { harness, binding, run, read: (name: string) => readNpy(readFileSync(join(harness.dir, name))) };
  }

  it('runs the fused kernel with the bias and residual and writes what the CPU reference writes', async () => {
    const { run, read, binding } = setup(epilogue);
    const gpu = await run('gpu', 'yg.npy');
    expect([gpu.code, gpu.stderr]).toEqual([0, expect.stringMatching(/^rocke run: rocke_direct_\S+( splits \d+)? \(chosen by ranker\)/)]);
    expect(binding.launches.some((l) => l.name.endsWith('_epgelu_bd_res'))).toBe(true);
    expect((await run('cpu', 'yc.npy')).code).toBe(0);
    const [yg, yc] = [read('yg.npy'), read('yc.npy')];
    expect(yg.shape).toEqual(yc.shape);
    expect(Buffer.from(yg.data.buffer).equals(Buffer.from(yc.data.buffer))).toBe(true);
  });

  it('names the missing fused kernels when the cache holds bare ones only', async () => {
    const { run } = setup(undefined);
    const r = await run('gpu', 'yg.npy');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no kernel for this problem with the fused epilogue epgelu_bd_res in /);
  });
});
