import { encodeDtype } from '@rocke/reference';
import { checkOutput, readNpyInput, writeOutput } from './files.js';
import type { CliDeps } from './deps.js';
import type { CliIo } from '../io.js';
import { UsageError } from '../io.js';
import { writeNpy, type NpyArray } from '../npy.js';
import type { Dtype } from '../planner.js';
import { EPILOGUE_OPTIONS, EPILOGUE_USAGE, epilogueFrom } from './epilogue-args.js';
import type { NamedProblem } from './problem-input.js';
import { cliOp } from './wiring.js';
import { cacheFrom, COMMON_OPTIONS, parse, parseArgs, positiveInt, printJson, targetsFrom } from './args.js';

export const RUN_USAGE = `rocke run --x x.npy --w w.npy --out y.npy [--stride 1] [--pad same] [--dilation 1] [--groups G]
          [--dtype fp16|bf16] [--miopen "..."] [--device gpu|cpu] [--target T] [--tune] [--repeat N] [--json]
  x is NHWC [N, H, W, C], w is KRSC [K, R, S, C/groups]; the problem's sizes come from their shapes
  (groups = C / w's last dim unless given), or from --miopen, which must then agree with them.
  y is written NHWK [N, Ho, Wo, K]. fp16 tensors are <f2 arrays; bf16 tensors are <u2 arrays holding
  the raw bf16 bits (NumPy has no bfloat16: save t.view(torch.uint16)); the dtype follows from them.
  <f4 inputs need --dtype and are rounded to it (nearest-even).
  --device gpu (default) runs through openConv over --cache-dir: the problem's tuning record on this
  GPU if there is one (nothing is timed), else the ranker's choice among the compiled kernels;
  --tune first times and verifies the candidates and records the winner (rocke tune); --repeat N
  calls run() N times and reports the host time per call.
  --device cpu runs @rocke/reference.
${EPILOGUE_USAGE}
  On the GPU the epilogue runs fused: --cache-dir must hold the kernels compiled with its shape
  (rocke bench-prep --epilogue act[:b32|:bd][:res]; split_c: a bare conv and a fused split-reduce helper).`;

/** Expected npy dtype for a conv dtype. */
const NPY_DTYPE = { fp16: 'float16', bf16: 'uint16' } as const;

/**
 * Reads an operand and returns its dtype bit patterns: matching 16-bit arrays as they are, float32
 * rounded to the problem dtype. Shape must equal `shape`.
 */
export function operandBits(name: string, array: NpyArray, shape: readonly number[], dtype: Dtype): { bits: Uint16Array; rounded: boolean } {
  if (array.shape.length !== shape.length || array.shape.some((d, i) => d !== shape[i])) {
    throw new UsageError(`${name} has shape (${array.shape.join(', ')}), the problem needs (${shape.join(', ')})`);
  }
  if (array.dtype === 'float32') return { bits: encodeDtype(array.data as Float32Array, dtype), rounded: true };
  if (array.dtype !== NPY_DTYPE[dtype]) {
    throw new UsageError(`${name} is ${array.dtype}, a ${dtype} problem needs ${NPY_DTYPE[dtype]}${dtype === 'bf16' ? ' (bf16 bits)' : ''} or float32`);
  }
  return { bits: array.data as Uint16Array, rounded: false };
}

/** npy dtype → problem dtype, for 16-bit arrays. */
function dtypeOf(a: NpyArray): Dtype | undefined {
  return a.dtype === 'float16' ? 'fp16' : a.dtype === 'uint16' ? 'bf16' : undefined;
}

/**
 * The problem `rocke run` solves: from --miopen, or from the operand shapes plus the stride, pad,
 * dilation, groups and dtype flags. Throws {@link UsageError} when the pieces disagree.
 */
export function runProblem(values: Record<string, string | boolean | undefined>, x: NpyArray, w: NpyArray): NamedProblem['problem'] {
  const r = cliOp.problemFromOperands(values, x.shape, w.shape, dtypeOf(x) ?? dtypeOf(w));
  if (!r.ok) throw new UsageError(r.reason);
  return r.problem;
}

/** `rocke run`. */
export async function runCommand(argv: readonly string[], io: CliIo, deps: CliDeps): Promise<number> {
  const { values } = parse('run', () =>
    parseArgs({
      args: [...argv],
      options: {
        ...COMMON_OPTIONS,
        x: { type: 'string' },
        w: { type: 'string' },
        out: { type: 'string' },
        ...cliOp.operandFlags,
        device: { type: 'string' },
        target: { type: 'string' },
        ...EPILOGUE_OPTIONS,
        tune: { type: 'boolean' },
        repeat: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }),
  );
  if (values.help) {
    io.stdout(`${RUN_USAGE}\n`);
    return 0;
  }
  for (const f of ['x', 'w', 'out'] as const) if (!values[f]) throw new UsageError(`run needs --${f} FILE.npy`);
  const device = values.device ?? 'gpu';
  if (device !== 'gpu' && device !== 'cpu') throw new UsageError(`--device must be gpu or cpu (got '${device}')`);
  checkOutput(io, '--out', values.out!);
  const xArr = readNpyInput(io, '--x', values.x!);
  const wArr = readNpyInput(io, '--w', values.w!);
  const problem = runProblem(values, xArr, wArr);
  const { channels, yShape } = cliOp.tensors(problem);
  const shapes = cliOp.operandShapes(problem);
  const x = operandBits('x', xArr, shapes.x, problem.dtype);
  const w = operandBits('w', wArr, shapes.w, problem.dtype);
  for (const [name, op] of [['x', x], ['w', w]] as const) {
    if (op.rounded) io.stderr(`rocke run: --${name} is float32; rounded to ${problem.dtype} (nearest-even)\n`);
  }
  const npyDtype = NPY_DTYPE[problem.dtype];
  const epilogue = epilogueFrom(values, { channels, dtype: problem.dtype }, yShape, (path, flag) => readNpyInput(io, `--${flag}`, path));
  let y: NpyArray;
  if (device === 'cpu') {
    const ref = cliOp.cpuRun(problem, x.bits, w.bits, epilogue);
    if ('reason' in ref) throw new UsageError(ref.reason);
    y = { dtype: npyDtype, shape: yShape, data: ref.y };
  } else {
    if (!deps.runConv) {
      io.stderr('rocke run: no GPU runtime is wired into this build (use --device cpu for the CPU reference)\n');
      return 1;
    }
    const target = targetsFrom(values.target)?.[0] ?? null;
    if (values.tune) {
      if (!deps.tune) throw new Error('no GPU tuner is wired into this build');
      const tuned = await deps.tune({ problems: [{ name: 'run', problem, cls: null }], target, verify: true, vsCudnn: false, warmup: 3, iters: 20, cacheDir: cacheFrom(values, io).root }, io);
      if (tuned.failures) throw new Error(`tuning failed: ${tuned.lines.map((l) => l.reason ?? '').join('; ')}`);
    }
    y = await deps.runConv(
      { ...(values.repeat !== undefined ? { repeat: positiveInt('repeat', values.repeat, 1) } : {}), ...(epilogue ? { epilogue } : {}), problem, x: { dtype: npyDtype, shape: xArr.shape, data: x.bits }, w: { dtype: npyDtype, shape: wArr.shape, data: w.bits }, target, cacheDir: cacheFrom(values, io).root },
      io,
    );
    if (y.shape.join(',') !== yShape.join(',')) throw new Error(`runtime returned y of shape (${y.shape.join(', ')}), expected (${yShape.join(', ')})`);
  }
  const outPath = writeOutput(io, '--out', values.out!, writeNpy(y));
  if (values.json) printJson(io, { out: outPath, device, problem, shape: y.shape, ...(epilogue ? { act: epilogue.act } : {}) });
  else io.stdout(`wrote ${outPath}: y ${problem.dtype} (${y.shape.join(', ')}) on ${device}\n`);
  return 0;
}
