/**
 * The fused-epilogue flags of `rocke run`: `--act`, `--alpha`, `--beta`, `--slope`, `--lo`, `--hi`,
 * `--bias b.npy`, `--residual r.npy`, read into @rocke/reference's `EpilogueValues`. Every bad
 * combination is a {@link UsageError} with its reason.
 */
import { ACTIVATIONS, encodeDtype, type Activation, type EpilogueValues } from '@rocke/reference';
import { UsageError } from '../io.js';
import type { NpyArray } from '../npy.js';
import type { Dtype } from '../planner.js';

/** parseArgs options of the epilogue flags. */
export const EPILOGUE_OPTIONS = {
  act: { type: 'string' },
  alpha: { type: 'string' },
  beta: { type: 'string' },
  slope: { type: 'string' },
  lo: { type: 'string' },
  hi: { type: 'string' },
  bias: { type: 'string' },
  residual: { type: 'string' },
} as const;

/** The usage lines of the epilogue flags. */
export const EPILOGUE_USAGE = `  Fused epilogue, y = act(alpha*conv + bias[k] + beta*r): --act ${ACTIVATIONS.join('|')}
  [--alpha 1] [--bias b.npy] [--residual r.npy --beta 1] [--slope 0.01 (leaky_relu)] [--lo L --hi H (clamp)].
  bias is [K]: float32 (used as is) or the problem's dtype; residual is y's shape [N, Ho, Wo, K] in the
  dtype (or float32, rounded).`;

/** Reading the flags' values: numbers, and the tensors from their paths. */
type Values = Record<string, string | boolean | undefined>;

function number(values: Values, name: string): number | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (typeof v !== 'string' || v.trim() === '' || !Number.isFinite(n)) throw new UsageError(`--${name} must be a finite number (got '${String(v)}')`);
  return n;
}

const NPY_OF = { fp16: 'float16', bf16: 'uint16' } as const;

/**
 * The epilogue the flags ask for, or undefined when none is given. `read` loads an .npy path
 * (the CLI's reader, so its errors name the flag); the problem's output has `channels` channels
 * (the bias length), shape `yShape` (the residual's) and its `dtype`.
 */
export function epilogueFrom(values: Values, problem: { channels: number; dtype: Dtype }, yShape: readonly number[], read: (path: string, flag: string) => NpyArray): EpilogueValues | undefined {
  const given = Object.keys(EPILOGUE_OPTIONS).filter((k) => values[k] !== undefined);
  if (given.length === 0) return undefined;
  const act = (values['act'] ?? 'none') as string;
  if (!(ACTIVATIONS as readonly string[]).includes(act)) throw new UsageError(`--act must be one of ${ACTIVATIONS.join(', ')} (got '${act}')`);
  const e: EpilogueValues = { act: act as Activation };
  const alpha = number(values, 'alpha');
  if (alpha !== undefined) e.alpha = alpha;
  const slope = number(values, 'slope');
  if (slope !== undefined && act !== 'leaky_relu') throw new UsageError('--slope applies to --act leaky_relu only');
  if (act === 'leaky_relu') e.slope = slope ?? 0.01;
  const lo = number(values, 'lo');
  const hi = number(values, 'hi');
  if ((lo !== undefined || hi !== undefined) && act !== 'clamp') throw new UsageError('--lo and --hi apply to --act clamp only');
  if (act === 'clamp') {
    if (lo === undefined || hi === undefined || !(lo <= hi)) throw new UsageError(`--act clamp needs --lo L --hi H with L <= H`);
    Object.assign(e, { lo, hi });
  }
  if (typeof values['bias'] === 'string') {
    const b = read(values['bias'], 'bias');
    if (b.shape.length !== 1 || b.shape[0] !== problem.channels) throw new UsageError(`--bias has shape (${b.shape.join(', ')}), the problem needs (${problem.channels})`);
    if (b.dtype === 'float32') e.bias = b.data as Float32Array;
    else if (b.dtype === NPY_OF[problem.dtype]) e.bias = b.data as Uint16Array;
    else throw new UsageError(`--bias is ${b.dtype}, a ${problem.dtype} problem takes float32 or ${NPY_OF[problem.dtype]}`);
  }
  const beta = number(values, 'beta');
  if (typeof values['residual'] === 'string') {
    const r = read(values['residual'], 'residual');
    if (r.shape.length !== yShape.length || r.shape.some((d, i) => d !== yShape[i])) {
      throw new UsageError(`--residual has shape (${r.shape.join(', ')}), y is (${yShape.join(', ')})`);
    }
    if (r.dtype === 'float32') e.residual = encodeDtype(r.data as Float32Array, problem.dtype);
    else if (r.dtype === NPY_OF[problem.dtype]) e.residual = r.data as Uint16Array;
    else throw new UsageError(`--residual is ${r.dtype}, a ${problem.dtype} problem takes ${NPY_OF[problem.dtype]} or float32`);
    if (beta !== undefined) e.beta = beta;
  } else if (beta !== undefined) throw new UsageError('--beta scales --residual; give one');
  return e;
}
