import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { outputExtent, type Problem } from '@rocke/conv-direct';
import { convForward, encodeDtype } from '@rocke/reference';
import { writeFileAtomic } from '../atomic-file.js';
import type { CliDeps, CliIo } from '../cli-io.js';
import { UsageError } from '../cli-io.js';
import { NpyFormatError, readNpy, writeNpy, type NpyArray } from '../npy.js';
import { PROBLEM_OPTIONS, PROBLEM_USAGE, problemFromValues } from '../problem-input.js';
import { cacheFrom, COMMON_OPTIONS, parse, parseArgs, printJson, targetsFrom } from './args.js';

export const RUN_USAGE = `rocke run <problem> --x x.npy --w w.npy --out y.npy [--device gpu|cpu] [--target T] [--json]
  x is NHWC [N, H, W, C], w is KRSC [K, R, S, C/groups], y is written NHWK [N, Ho, Wo, K].
  fp16 tensors are <f2 arrays; bf16 tensors are <u2 arrays holding the raw bf16 bits (NumPy has no
  bfloat16: save t.view(torch.uint16)); <f4 inputs are rounded to the dtype (nearest-even).
  --device gpu (default) runs the best cached kernel; --device cpu runs @rocke/reference.
  ${PROBLEM_USAGE}`;

/** Expected npy dtype for a conv dtype. */
const NPY_DTYPE = { fp16: 'float16', bf16: 'uint16' } as const;

/**
 * Reads an operand and returns its dtype bit patterns: matching 16-bit arrays as they are, float32
 * rounded to the problem dtype. Shape must equal `shape`.
 */
export function operandBits(name: string, array: NpyArray, shape: readonly number[], dtype: Problem['dtype']): { bits: Uint16Array; rounded: boolean } {
  if (array.shape.length !== shape.length || array.shape.some((d, i) => d !== shape[i])) {
    throw new UsageError(`${name} has shape (${array.shape.join(', ')}), the problem needs (${shape.join(', ')})`);
  }
  if (array.dtype === 'float32') return { bits: encodeDtype(array.data as Float32Array, dtype), rounded: true };
  if (array.dtype !== NPY_DTYPE[dtype]) {
    throw new UsageError(`${name} is ${array.dtype}, a ${dtype} problem needs ${NPY_DTYPE[dtype]}${dtype === 'bf16' ? ' (bf16 bits)' : ''} or float32`);
  }
  return { bits: array.data as Uint16Array, rounded: false };
}

function readOperand(io: CliIo, path: string, name: string): NpyArray {
  let bytes: Buffer;
  try {
    bytes = readFileSync(resolve(io.cwd, path));
  } catch (err) {
    throw new UsageError(`cannot read --${name} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return readNpy(bytes);
  } catch (err) {
    if (err instanceof NpyFormatError) throw new UsageError(`--${name} ${path}: ${err.message}`);
    throw err;
  }
}

/** `rocke run`. */
export async function runCommand(argv: readonly string[], io: CliIo, deps: CliDeps): Promise<number> {
  const { values } = parse('run', () => parseArgs({ args: [...argv], options: {
    ...COMMON_OPTIONS,
    ...PROBLEM_OPTIONS,
    x: { type: 'string' },
    w: { type: 'string' },
    out: { type: 'string' },
    device: { type: 'string' },
    target: { type: 'string' },
  }, strict: true, allowPositionals: false }));
  if (values.help) {
    io.stdout(`${RUN_USAGE}\n`);
    return 0;
  }
  const problem = problemFromValues(values);
  if (!problem) throw new UsageError(`run needs a problem\n${PROBLEM_USAGE}`);
  for (const f of ['x', 'w', 'out'] as const) if (!values[f]) throw new UsageError(`run needs --${f} FILE.npy`);
  const device = values.device ?? 'gpu';
  if (device !== 'gpu' && device !== 'cpu') throw new UsageError(`--device must be gpu or cpu (got '${device}')`);
  const Ho = outputExtent(problem.H, problem.R, problem.strideH, problem.padH, problem.dilationH);
  const Wo = outputExtent(problem.W, problem.S, problem.strideW, problem.padW, problem.dilationW);
  const xArr = readOperand(io, values.x!, 'x');
  const wArr = readOperand(io, values.w!, 'w');
  const x = operandBits('x', xArr, [problem.N, problem.H, problem.W, problem.C], problem.dtype);
  const w = operandBits('w', wArr, [problem.K, problem.R, problem.S, problem.C / problem.groups], problem.dtype);
  for (const [name, op] of [['x', x], ['w', w]] as const) {
    if (op.rounded) io.stderr(`rocke run: --${name} is float32; rounded to ${problem.dtype} (nearest-even)\n`);
  }
  const npyDtype = NPY_DTYPE[problem.dtype];
  let y: NpyArray;
  if (device === 'cpu') {
    y = { dtype: npyDtype, shape: [problem.N, Ho, Wo, problem.K], data: convForward(problem, x.bits, w.bits).y };
  } else {
    if (!deps.runConv) {
      io.stderr('rocke run: no GPU runtime is wired into this build (use --device cpu for the CPU reference)\n');
      return 1;
    }
    const target = targetsFrom(values.target)?.[0] ?? null;
    y = await deps.runConv(
      { problem, x: { dtype: npyDtype, shape: xArr.shape, data: x.bits }, w: { dtype: npyDtype, shape: wArr.shape, data: w.bits }, target, cacheDir: cacheFrom(values, io).root },
      io,
    );
    const want = [problem.N, Ho, Wo, problem.K];
    if (y.shape.join(',') !== want.join(',')) throw new Error(`runtime returned y of shape (${y.shape.join(', ')}), expected (${want.join(', ')})`);
  }
  const outPath = resolve(io.cwd, values.out!);
  writeFileAtomic(outPath, writeNpy(y));
  if (values.json) printJson(io, { out: outPath, device, dtype: problem.dtype, shape: y.shape });
  else io.stdout(`wrote ${outPath}: y ${problem.dtype} (${y.shape.join(', ')}) on ${device}\n`);
  return 0;
}
