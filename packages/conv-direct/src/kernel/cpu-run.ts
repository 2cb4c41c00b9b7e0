/**
 * Runs a built conv kernel on the CPU through the @rocke/ir interpreter, launch by launch as
 * `plan()` lays them out (chunks over views of the same buffers, kernargs in ABI order). This is
 * how CI checks the numerics of the exact IR it ships, on every target's lowering.
 */
import { interpret } from '@rocke/ir';
import type { EpilogueScalars, KernargValue } from '../abi.js';
import { plan, type LaunchPlan } from '../plan.js';
import { problemGeometry, type Problem } from '../problem.js';
import { WORKSPACE_ELEMENT_BYTES } from '../validate.js';
import type { ConvKernel } from './build.js';

/** Output of {@link interpretConv}. */
export interface CpuRunResult {
  /** y, NHWK, as 16-bit patterns of the problem's dtype (split_c: still unwritten, see `ws`). */
  readonly y: Uint16Array;
  /** split_c: the fp32 partial sums [splits, N, Ho, Wo, K]. */
  readonly ws: Float32Array | undefined;
  readonly plan: LaunchPlan;
  /** IR instructions executed over all launches. */
  readonly instructions: number;
}

/** Options for {@link interpretConv}. */
export interface CpuRunOptions {
  /** split_c: the split count (default: the planner's choice). */
  readonly splits?: number;
  /** Initial byte of every y element (default 0x7F: an unwritten element reads as NaN-like garbage, never as 0). */
  readonly yFill?: number;
  /** The spec's fused epilogue: its scalars, bias (K: fp32 values or dtype bits) and residual (y's layout, dtype bits). */
  readonly epilogue?: { readonly scalars: EpilogueScalars; readonly bias?: Float32Array | Uint16Array; readonly residual?: Uint16Array };
}

/**
 * Plans `problem` with the kernel's spec and interprets every launch. `x` is NHWC and `w` KRSC,
 * both as 16-bit patterns of the dtype. Throws the planner's or the interpreter's error.
 */
export function interpretConv(kernel: ConvKernel, problem: Problem, x: Uint16Array, w: Uint16Array, options: CpuRunOptions = {}): CpuRunResult {
  const geo = problemGeometry(problem);
  if (x.length * 2 !== geo.xBytes) throw new RangeError(`x holds ${x.length} elements, the problem needs ${geo.xBytes / 2}`);
  if (w.length * 2 !== geo.wBytes) throw new RangeError(`w holds ${w.length} elements, the problem needs ${geo.wBytes / 2}`);
  const e = options.epilogue;
  const p = plan(kernel.spec, problem, kernel.spec.target, { ...(options.splits !== undefined ? { splits: options.splits } : {}), ...(e ? { epilogue: e.scalars } : {}) });
  const y = new Uint16Array(geo.yBytes / 2).fill(((options.yFill ?? 0x7f) << 8) | (options.yFill ?? 0x7f));
  const ws = p.workspaceBytes > 0 ? new Float32Array(p.workspaceBytes / WORKSPACE_ELEMENT_BYTES) : undefined;
  const buffers: Record<string, ArrayBufferView> = { x, w, y, ...(ws ? { ws } : {}), ...(e?.bias ? { bias: e.bias } : {}), ...(e?.residual ? { residual: e.residual } : {}) };
  let instructions = 0;
  for (const launch of p.launches) {
    const args = launch.kernargs.map((v: KernargValue) => {
      if (typeof v === 'object') return { buffer: v.buffer, byteOffset: v.offsetBytes };
      return v;
    });
    const r = interpret(kernel.module, kernel.name, {
      target: kernel.target,
      grid: launch.grid,
      block: launch.block,
      args,
      buffers,
      dynamicShared: launch.sharedBytes,
    });
    instructions += r.instructions;
  }
  return { y, ws, plan: p, instructions };
}
