/**
 * The LLVM toolchain driver: finds LLVM (>= 20, preferring 22; ROCKE_LLVM_DIR overrides), verifies
 * IR text with llvm-as, and compiles it to an AMD code object (opt -O3, llc -filetype=obj,
 * ld.lld -shared) or to NVIDIA PTX (+ cubin through ptxas when present). Each run works in its
 * own temporary directory, removed afterwards. A failing tool raises ToolError with the command
 * and the tool's stderr.
 */
import { execFile, execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Target } from './targets/target.js';
import { makeTempDir, removeTempDir } from './temp-dirs.js';

/** A tool exited non-zero (or could not start). */
export class ToolError extends Error {
  override readonly name = 'ToolError';
  constructor(
    /** argv of the failing command. */
    readonly command: readonly string[],
    /** What the tool printed on stderr. */
    readonly stderr: string,
    readonly exitCode: number | null,
  ) {
    super(`${command.join(' ')} failed${exitCode === null ? '' : ` (exit ${exitCode})`}:\n${stderr.trim()}`);
  }
}

/** No usable LLVM (or a flavor the found LLVM cannot compile). */
export class ToolchainError extends Error {
  override readonly name = 'ToolchainError';
}

/** Resolved tool paths. */
export interface Toolchain {
  /** LLVM major version, e.g. 22. */
  readonly major: number;
  /** Full version string, e.g. `22.1.8`. */
  readonly version: string;
  readonly llvmAs: string;
  readonly opt: string;
  readonly llc: string;
  readonly ldLld: string;
  readonly objdump: string;
  /** `ptxas` when found (ROCKE_PTXAS, PATH, /usr/local/cuda/bin). */
  readonly ptxas: string | undefined;
}

const MIN_MAJOR = 20;
const PREFERRED = [22, 21, 20];

function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function onPath(name: string, env: Readonly<Record<string, string | undefined>>): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

function llvmVersion(llc: string): string | undefined {
  try {
    const out = execFileSync(llc, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return /LLVM version (\d+\.\d+\.\d+)/.exec(out)?.[1];
  } catch {
    return undefined;
  }
}

/** Tools of one LLVM install: a bin directory, or PATH names with a `-N` suffix (or none). */
function resolveIn(dir: string | undefined, suffix: string, env: Readonly<Record<string, string | undefined>>): Omit<Toolchain, 'major' | 'version' | 'ptxas'> | undefined {
  const find = (name: string) => (dir ? (isExecutable(join(dir, name)) ? join(dir, name) : undefined) : onPath(`${name}${suffix}`, env));
  const llvmAs = find('llvm-as');
  const opt = find('opt');
  const llc = find('llc');
  const ldLld = find('ld.lld');
  const objdump = find('llvm-objdump');
  if (!llvmAs || !opt || !llc || !ldLld || !objdump) return undefined;
  return { llvmAs, opt, llc, ldLld, objdump };
}

/**
 * Finds LLVM: `ROCKE_LLVM_DIR` (a prefix or its bin/) when set, else /usr/lib/llvm-{22,21,20}/bin
 * (`options.installDirs` replaces that list), else `llc-22`-style suffixed tools on PATH, else
 * unsuffixed tools on PATH. Must be >= 20.
 */
export function findToolchain(env: Readonly<Record<string, string | undefined>> = process.env, options: { installDirs?: readonly string[] } = {}): Toolchain {
  const candidates: { dir: string | undefined; suffix: string; where: string }[] = [];
  if (env.ROCKE_LLVM_DIR) {
    const d = env.ROCKE_LLVM_DIR;
    candidates.push({ dir: existsSync(join(d, 'bin', 'llc')) ? join(d, 'bin') : d, suffix: '', where: `ROCKE_LLVM_DIR=${d}` });
  } else {
    const installDirs = options.installDirs ?? PREFERRED.map((v) => `/usr/lib/llvm-${v}/bin`);
    for (const d of installDirs) candidates.push({ dir: d, suffix: '', where: d });
    for (const v of PREFERRED) candidates.push({ dir: undefined, suffix: `-${v}`, where: `PATH (*-${v})` });
    candidates.push({ dir: undefined, suffix: '', where: 'PATH' });
  }
  const tried: string[] = [];
  for (const c of candidates) {
    const tools = resolveIn(c.dir, c.suffix, env);
    if (!tools) {
      tried.push(`${c.where}: llvm-as/opt/llc/ld.lld/llvm-objdump not all present`);
      continue;
    }
    const version = llvmVersion(tools.llc);
    const major = version ? Number(version.split('.')[0]) : NaN;
    if (!(major >= MIN_MAJOR)) {
      tried.push(`${c.where}: LLVM ${version ?? 'of unknown version'} is older than ${MIN_MAJOR}`);
      continue;
    }
    const ptxas = [env.ROCKE_PTXAS, onPath('ptxas', env), '/usr/local/cuda/bin/ptxas'].find((p): p is string => !!p && isExecutable(p));
    return { ...tools, major, version: version!, ptxas };
  }
  throw new ToolchainError(`no LLVM >= ${MIN_MAJOR} found (set ROCKE_LLVM_DIR). Tried:\n  ${tried.join('\n  ')}`);
}

/** Limits of one tool run: a timeout (the tool is killed, SIGKILL) and an abort signal. */
interface RunLimits {
  readonly timeoutMs?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

function run(cmd: string, args: readonly string[], input?: string, limits: RunLimits = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      cmd,
      args,
      { maxBuffer: 256 * 1024 * 1024, encoding: 'utf8', killSignal: 'SIGKILL', ...(limits.timeoutMs ? { timeout: limits.timeoutMs } : {}), ...(limits.signal ? { signal: limits.signal } : {}) },
      (err, stdout, stderr) => {
        if (err) {
          const e = err as { code?: unknown; signal?: unknown; killed?: boolean; name?: string };
          const code = typeof e.code === 'number' ? e.code : null;
          const why = e.name === 'AbortError' ? 'aborted' : e.killed || typeof e.signal === 'string' ? `killed by ${String(e.signal ?? 'SIGKILL')}${limits.timeoutMs ? ` (timeout ${limits.timeoutMs} ms)` : ''}` : '';
          reject(new ToolError([cmd, ...args], why ? `${why}${stderr ? `\n${stderr}` : ''}` : stderr || err.message, code));
        } else resolve({ stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** Prefix of the private temp dir of each compile (`rocke-ir-<pid>-XXXXXX` in the system temp dir). */
export const TOOLCHAIN_TEMP_PREFIX = 'rocke-ir-';

/**
 * Runs `fn` in a private temp dir, removed when it ends, at process exit (a SIGTERMed CLI exits
 * through it), or by {@link sweepStaleTempDirs} in a later process when this one was killed.
 */
async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = makeTempDir(TOOLCHAIN_TEMP_PREFIX);
  try {
    return await fn(dir);
  } finally {
    removeTempDir(dir);
  }
}

/** Parses and verifies IR text with llvm-as; throws ToolError with llvm-as's message on bad IR. */
export async function verify(text: string, toolchain: Toolchain = findToolchain()): Promise<void> {
  await run(toolchain.llvmAs, ['-', '-o', '/dev/null'], text);
}

export interface CompileOptions {
  readonly toolchain?: Toolchain;
  /** opt level (default 3). */
  readonly optLevel?: 0 | 1 | 2 | 3;
  /** NVIDIA: run ptxas when available (default true). */
  readonly ptxas?: boolean;
  /** NVIDIA: run ptxas with `-v` and return its report as `ptxasLog` (default true; the cubin records the flag). */
  readonly ptxasVerbose?: boolean;
  /** Kill a tool that runs longer than this (default: no limit); the compile rejects with ToolError. */
  readonly timeoutMs?: number;
  /** Aborting kills the running tool; the compile rejects with ToolError. */
  readonly signal?: AbortSignal;
}

/** An AMD code object (`.hsaco`, ELF shared object). */
export interface AmdCompileResult {
  readonly vendor: 'amd';
  readonly target: string;
  readonly object: Uint8Array;
}

/** NVIDIA PTX text, plus the cubin and `ptxas -v` log when ptxas ran. */
export interface NvidiaCompileResult {
  readonly vendor: 'nvidia';
  readonly target: string;
  readonly ptx: string;
  readonly cubin: Uint8Array | undefined;
  readonly ptxasLog: string | undefined;
}

export type CompileResult = AmdCompileResult | NvidiaCompileResult;

function checkFlavor(target: Target, tc: Toolchain): void {
  const need = Number(target.flavor.replace('llvm', ''));
  if (tc.major < need) throw new ToolchainError(`IR flavor ${target.flavor} needs LLVM >= ${need}, found LLVM ${tc.version} (${tc.llc})`);
}

/** Compiles IR text for a target. */
export async function compile(text: string, target: Target, options: CompileOptions = {}): Promise<CompileResult> {
  const tc = options.toolchain ?? findToolchain();
  checkFlavor(target, tc);
  // opt and llc take the same target flags.
  const targetFlags = [`-mtriple=${target.triple}`, `-mcpu=${target.cpu}`, ...(target.features ? [`-mattr=${target.features}`] : [])];
  const limits: RunLimits = { timeoutMs: options.timeoutMs, signal: options.signal };
  const tool = (cmd: string, args: readonly string[]) => run(cmd, args, undefined, limits);
  options.signal?.throwIfAborted();
  return withTempDir(async (dir) => {
    const ll = join(dir, 'kernel.ll');
    const bc = join(dir, 'kernel.opt.bc');
    writeFileSync(ll, text);
    await tool(tc.opt, [`-O${options.optLevel ?? 3}`, ...targetFlags, ll, '-o', bc]);
    if (target.vendor === 'amd') {
      const obj = join(dir, 'kernel.o');
      const hsaco = join(dir, 'kernel.hsaco');
      await tool(tc.llc, [...targetFlags, '-filetype=obj', bc, '-o', obj]);
      await tool(tc.ldLld, ['-shared', obj, '-o', hsaco]);
      return { vendor: 'amd', target: target.name, object: new Uint8Array(readFileSync(hsaco)) };
    }
    const ptxPath = join(dir, 'kernel.ptx');
    await tool(tc.llc, [...targetFlags, bc, '-o', ptxPath]);
    const ptx = readFileSync(ptxPath, 'utf8');
    if (options.ptxas === false || !tc.ptxas) return { vendor: 'nvidia', target: target.name, ptx, cubin: undefined, ptxasLog: undefined };
    const cubinPath = join(dir, 'kernel.cubin');
    const verbose = options.ptxasVerbose !== false;
    const { stdout, stderr } = await tool(tc.ptxas, [...(verbose ? ['-v'] : []), `-arch=${target.cpu}`, ptxPath, '-o', cubinPath]);
    return { vendor: 'nvidia', target: target.name, ptx, cubin: new Uint8Array(readFileSync(cubinPath)), ptxasLog: verbose ? `${stdout}${stderr}` : undefined };
  });
}

/**
 * Names the exact tools `compile()` uses for a vendor: llc's LLVM version line, and for NVIDIA
 * ptxas's release line (or that there is no ptxas and the output is PTX). A cache keyed by it
 * rebuilds what another toolchain built.
 */
export async function toolchainFingerprint(vendor: 'amd' | 'nvidia', toolchain: Toolchain = findToolchain()): Promise<string> {
  const line = (text: string, pattern: RegExp) => (text.split('\n').find((l) => pattern.test(l)) ?? text.split('\n')[0] ?? '').trim();
  const llc = line((await run(toolchain.llc, ['--version'], undefined, { timeoutMs: 30_000 })).stdout, /LLVM version/);
  if (vendor !== 'nvidia' || !toolchain.ptxas) return `${llc}${vendor === 'nvidia' ? '; no ptxas (PTX)' : ''}`;
  const ptxas = line((await run(toolchain.ptxas, ['--version'], undefined, { timeoutMs: 30_000 })).stdout, /release/);
  return `${llc}; ${ptxas}`;
}

/** Disassembles an AMD code object with llvm-objdump (`-d --mcpu=<target>`). */
export async function disassemble(object: Uint8Array, target: Target, toolchain: Toolchain = findToolchain()): Promise<string> {
  if (target.vendor !== 'amd') throw new ToolchainError(`disassemble reads AMD code objects; ${target.name} produces PTX text`);
  return withTempDir(async (dir) => {
    const p = join(dir, 'kernel.hsaco');
    writeFileSync(p, object);
    return (await run(toolchain.objdump, ['-d', `--mcpu=${target.cpu}`, p])).stdout;
  });
}
