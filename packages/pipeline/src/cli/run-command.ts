import { outputExtent, parseProblemFlags, type Problem } from '@rocke/conv-direct';
import { applyEpilogue, convForward, convGeometry, DEFAULT_BUDGET_BYTES, encodeDtype, fp32ImageBytes } from '@rocke/reference';
import { checkOutput, readNpyInput, writeOutput } from './files.js';
import type { CliDeps } from './deps.js';
import type { CliIo } from '../io.js';
import { UsageError } from '../io.js';
import { writeNpy, type NpyArray } from '../npy.js';
import { EPILOGUE_OPTIONS, EPILOGUE_USAGE, epilogueFrom } from './epilogue-args.js';
import { problemFromValues } from './problem-input.js';
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

/**
 * Throws a {@link UsageError} when one image of the problem does not fit the CPU reference's
 * budget (it holds each image of x and y as fp32): such a problem only runs on a GPU.
 */
function checkReferenceBudget(problem: Problem): void {
  const image = fp32ImageBytes(convGeometry(problem));
  const per = Math.max(image.x, image.y);
  if (per > DEFAULT_BUDGET_BYTES) {
    throw new UsageError(
      `--device cpu: one image needs ${per} bytes as fp32 (x ${image.x}, y ${image.y}), over the CPU reference's budget of ${DEFAULT_BUDGET_BYTES} bytes per operand; run it with --device gpu`,
    );
  }
}

/** npy dtype → conv dtype, for 16-bit arrays. */
function dtypeOf(a: NpyArray): Problem['dtype'] | undefined {
  return a.dtype === 'float16' ? 'fp16' : a.dtype === 'uint16' ? 'bf16' : undefined;
}

/**
 * The problem `rocke run` solves: from --miopen, or from the operand shapes plus the stride, pad,
 * dilation, groups and dtype flags. Throws {@link UsageError} when the pieces disagree.
 */
export function runProblem(values: Record<string, string | boolean | undefined>, x: NpyArray, w: NpyArray): Problem {
  if (values['miopen'] !== undefined) {
    const extra = ['stride', 'pad', 'dilation', 'groups', 'dtype'].filter((f) => values[f] !== undefined);
    if (extra.length) throw new UsageError(`with --miopen the problem is fully given; drop ${extra.map((f) => `--${f}`).join(' ')}`);
    return problemFromValues({ miopen: values['miopen'] })!;
  }
  if (x.shape.length !== 4) throw new UsageError(`x must be 4-D NHWC, got shape (${x.shape.join(', ')})`);
  if (w.shape.length !== 4) throw new UsageError(`w must be 4-D KRSC, got shape (${w.shape.join(', ')})`);
  const [N, H, W, C] = x.shape as [number, number, number, number];
  const [K, R, S, cpg] = w.shape as [number, number, number, number];
  let groups: string;
  if (values['groups'] !== undefined) groups = String(values['groups']);
  else {
    if (cpg === 0 || C % cpg !== 0) throw new UsageError(`w's last dimension ${cpg} does not divide x's channels ${C}`);
    groups = String(C / cpg);
  }
  const fromData = dtypeOf(x) ?? dtypeOf(w);
  const dtype = values['dtype'] === undefined ? fromData : String(values['dtype']);
  if (dtype === undefined) throw new UsageError('x and w are float32: say which dtype to run with --dtype fp16|bf16');
  const argv = ['--N', N, '--H', H, '--W', W, '--C', C, '--K', K, '--R', R, '--S', S, '--groups', groups, '--dtype', dtype].map(String);
  for (const f of ['stride', 'pad', 'dilation'] as const) if (values[f] !== undefined) argv.push(`--${f}`, String(values[f]));
  const r = parseProblemFlags(argv);
  if (!r.ok) throw new UsageError(`bad problem: ${r.reason}`);
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
        stride: { type: 'string' },
        pad: { type: 'string' },
        dilation: { type: 'string' },
        groups: { type: 'string' },
        dtype: { type: 'string' },
        miopen: { type: 'string' },
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
  const Ho = outputExtent(problem.H, problem.R, problem.strideH, problem.padH, problem.dilationH);
  const Wo = outputExtent(problem.W, problem.S, problem.strideW, problem.padW, problem.dilationW);
  const x = operandBits('x', xArr, [problem.N, problem.H, problem.W, problem.C], problem.dtype);
  const w = operandBits('w', wArr, [problem.K, problem.R, problem.S, problem.C / problem.groups], problem.dtype);
  for (const [name, op] of [['x', x], ['w', w]] as const) {
    if (op.rounded) io.stderr(`rocke run: --${name} is float32; rounded to ${problem.dtype} (nearest-even)\n`);
  }
  const npyDtype = NPY_DTYPE[problem.dtype];
  const epilogue = epilogueFrom(values, problem, [problem.N, Ho, Wo, problem.K], (path, flag) => readNpyInput(io, `--${flag}`, path));
  let y: NpyArray;
  if (device === 'cpu') {
    checkReferenceBudget(problem);
    const ref = convForward(problem, x.bits, w.bits);
    const data = epilogue ? applyEpilogue(ref.geometry, ref.y32, epilogue).y : ref.y;
    y = { dtype: npyDtype, shape: [problem.N, Ho, Wo, problem.K], data };
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
    const want = [problem.N, Ho, Wo, problem.K];
    if (y.shape.join(',') !== want.join(',')) throw new Error(`runtime returned y of shape (${y.shape.join(', ')}), expected (${want.join(', ')})`);
  }
  const outPath = writeOutput(io, '--out', values.out!, writeNpy(y));
  if (values.json) printJson(io, { out: outPath, device, problem, shape: y.shape, ...(epilogue ? { act: epilogue.act } : {}) });
  else io.stdout(`wrote ${outPath}: y ${problem.dtype} (${y.shape.join(', ')}) on ${device}\n`);
  return 0;
}
