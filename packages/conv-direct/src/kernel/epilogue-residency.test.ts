/**
 * A fused epilogue must not cost its kernel resident workgroups: compiled for sm_90 with ptxas,
 * the fused kernel (silu + fp32 bias + residual) of each spec below fits as many workgroups per SM
 * as the bare kernel (registers and shared memory), and spills no more. The specs cover every
 * store path whose reads are placed by residency: the staged store of mma.sync (grouped, a
 * register-bound pointwise tile, a one-workgroup dense tile with many vectors per thread) and of
 * the warpgroup MMA (one and four warpgroups), and depthwise.
 */
import { compile, findToolchain, getTarget, printModule } from '@rocke/ir';
import { describe, expect, it } from 'vitest';
import { specFromKernelName } from '../ranker/spec-from-name.js';
import { withEpilogue, type Spec } from '../spec.js';
import { buildConvKernel } from './build.js';

const SILU_BIAS_RESIDUAL = { act: 'silu', bias: 'fp32', residual: true } as const;

const NAMES = [
  'rocke_direct_grouped_sm_90_bf16_r3s3_u1v1_p1q1_t16x16x16_ck16_w1x8_am16n8k16_lp8_db_cs0x1x64_wgm8_gm4',
  'rocke_direct_pointwise_sm_90_bf16_r1s1_u1v1_p0q0_t8x16x128_ck32_w1x4_am16n8k16_lp8_db_cs0x1x64_wgm8',
  'rocke_direct_dense_sm_90_bf16_r3s3_u2v2_p1q1_t14x16x128_ck16_w4x2_am16n8k16_lp8_db_cs0x1x64_wgm8',
  'rocke_direct_dense_sm_90_bf16_r3s3_u1v1_p1q1_t16x16x64_ck64_w1x1_am64nNk16_lp0_db_cs0x1x64_wgm8',
  'rocke_direct_dense_sm_90_bf16_r3s3_u1v1_p1q1_t16x16x64_ck64_w1x4_am64nNk16_lp0_db_cs0x1x64_wgm8',
  'rocke_direct_depthwise_sm_90_bf16_r5s5_u1v1_p2q2_t4x28x32_ck8_w4x2_afma_lp8_cs0x1x64_wgm8',
];

/** Registers, spilled bytes and resident workgroups per SM of a spec's kernel, from `ptxas -v`. */
async function compiled(spec: Spec): Promise<{ registers: number; spills: number; perSm: number }> {
  const k = buildConvKernel(spec);
  const r = await compile(printModule(k.module), getTarget('sm_90'));
  const log = r.vendor === 'nvidia' ? (r.ptxasLog ?? '') : '';
  const registers = Number(/Used (\d+) registers/.exec(log)?.[1]);
  const spills = Number(/(\d+) bytes spill stores/.exec(log)?.[1] ?? 0);
  const t = getTarget('sm_90');
  const file = t.registers.kind === 'file' ? t.registers.perUnit : 0;
  // Registers are allocated per warp in blocks of 256 (8 per thread).
  const byRegisters = Math.floor(file / (Math.ceil(registers / 8) * 8 * k.threads));
  const byShared = Math.floor(t.sharedBytesPerUnit / (k.dynamicSharedBytes + t.sharedReservedPerBlock));
  return { registers, spills, perSm: Math.min(byRegisters, byShared, Math.floor(t.maxThreadsPerUnit / k.threads)) };
}

describe.skipIf(!findToolchain().ptxas)('fused epilogue residency (sm_90, ptxas)', () => {
  it.each(NAMES)('%s: the fused kernel keeps the bare kernel\'s workgroups per SM and spills nothing more', async (name) => {
    const parsed = specFromKernelName(name);
    if (!parsed.ok) throw new Error(parsed.reason);
    const bare = await compiled(parsed.spec);
    const fused = await compiled(withEpilogue(parsed.spec, SILU_BIAS_RESIDUAL));
    expect(Number.isInteger(bare.registers) && Number.isInteger(fused.registers)).toBe(true);
    expect({ perSm: fused.perSm, spills: fused.spills }).toEqual({ perSm: bare.perSm, spills: bare.spills });
  }, 60_000);
});
