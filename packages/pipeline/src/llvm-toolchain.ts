import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { CodeKind } from './cache.js';

/** Targets the pipeline compiles for. */
export const TARGETS = ['gfx950', 'gfx942', 'sm_90'] as const;
/** One of {@link TARGETS}. */
export type TargetName = (typeof TARGETS)[number];

/** True for a name in {@link TARGETS}. */
export function isTargetName(name: string): name is TargetName {
  return (TARGETS as readonly string[]).includes(name);
}

/** A compiled code object. */
export interface CompiledCode {
  kind: CodeKind;
  bytes: Uint8Array;
}

/**
 * Compiles IR text for a target. compile-all calls `compile` for many kernels at once (up to its
 * job count), so an implementation must be asynchronous and must not block the event loop.
 */
export interface KernelCompiler {
  /** The LLVM flavor IR is written for (e.g. `llvm22`); part of every cache identity. */
  readonly flavor: string;
  /** A string naming the exact tool versions; an entry built by another toolchain is rebuilt. */
  fingerprint(target: TargetName): Promise<string>;
  compile(irText: string, target: TargetName, options?: { signal?: AbortSignal }): Promise<CompiledCode>;
}

/** A tool failed: carries the command line, exit status and stderr. */
export class ToolError extends Error {
  override readonly name = 'ToolError';
  constructor(
    readonly command: string[],
    readonly status: number | null,
    readonly signal: string | null,
    readonly stderr: string,
  ) {
    const how = signal ? `killed by ${signal}` : `exit status ${status}`;
    super(`${command[0]} failed (${how}): ${stderr.trim().split('\n').slice(0, 8).join('\n') || '(no output)'}\n  command: ${command.join(' ')}`);
  }
}

/** Where the LLVM tools were found. */
export interface LlvmTools {
  opt: string;
  llc: string;
  lld: string;
  /** ptxas, or null: NVIDIA code is then stored as PTX for the driver to JIT. */
  ptxas: string | null;
  major: number;
}

function findOnPath(names: string[], env: NodeJS.ProcessEnv): string | null {
  const dirs = (env['PATH'] ?? '').split(delimiter).filter(Boolean);
  for (const name of names) for (const dir of dirs) if (existsSync(join(dir, name))) return join(dir, name);
  return null;
}

/**
 * Finds LLVM ≥ 20: `$ROCKE_LLVM_DIR/bin` (or the directory itself), then /usr/lib/llvm-{22,21,20}/bin,
 * then versioned and plain names on PATH. Throws one message listing every place it looked.
 */
export function findLlvmTools(env: NodeJS.ProcessEnv = process.env): LlvmTools {
  const tried: string[] = [];
  const dirs: [string, number | null][] = [];
  const override = env['ROCKE_LLVM_DIR'];
  if (override) dirs.push([join(override, 'bin'), null], [override, null]);
  for (const v of [22, 21, 20]) dirs.push([`/usr/lib/llvm-${v}/bin`, v]);
  const ptxas = findOnPath(['ptxas'], env) ?? (existsSync('/usr/local/cuda/bin/ptxas') ? '/usr/local/cuda/bin/ptxas' : null);
  for (const [dir, major] of dirs) {
    const llc = join(dir, 'llc');
    tried.push(dir);
    if (existsSync(llc) && existsSync(join(dir, 'opt')) && existsSync(join(dir, 'ld.lld'))) {
      return { opt: join(dir, 'opt'), llc, lld: join(dir, 'ld.lld'), ptxas, major: major ?? majorFromPath(dir) };
    }
  }
  for (const v of [22, 21, 20]) {
    const llc = findOnPath([`llc-${v}`], env);
    const opt = findOnPath([`opt-${v}`], env);
    const lld = findOnPath([`ld.lld-${v}`], env);
    if (llc && opt && lld) return { opt, llc, lld, ptxas, major: v };
    tried.push(`llc-${v}/opt-${v}/ld.lld-${v} on PATH`);
  }
  throw new Error(`LLVM >= 20 not found (set ROCKE_LLVM_DIR). Looked in: ${tried.join(', ')}`);
}

function majorFromPath(dir: string): number {
  const m = /llvm-(\d+)/.exec(dir);
  // A custom ROCKE_LLVM_DIR without a version in its name: assume the newest flavor we know.
  return m ? Number(m[1]) : 22;
}

const TRIPLE: Record<TargetName, string> = {
  gfx950: 'amdgcn-amd-amdhsa',
  gfx942: 'amdgcn-amd-amdhsa',
  sm_90: 'nvptx64-nvidia-cuda',
};

/** Runs a tool, resolves with stdout; rejects with {@link ToolError} on failure or timeout. */
function runTool(argv: string[], options: { timeoutMs: number; signal?: AbortSignal | undefined }): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const [cmd, ...args] = argv as [string, ...string[]];
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: options.timeoutMs, killSignal: 'SIGKILL', signal: options.signal });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', (e) => reject(new ToolError(argv, null, null, `${e.message}${err ? `\n${err}` : ''}`)));
    child.on('close', (status, signal) => {
      if (status === 0) resolvePromise(out);
      else reject(new ToolError(argv, status, signal, err));
    });
  });
}

/**
 * The default {@link KernelCompiler}: runs `opt -O3`, `llc -O3` and then `ld.lld -shared` (AMD, a
 * .hsaco) or `ptxas` (NVIDIA, a cubin; PTX when ptxas is absent) as child processes in a private
 * temp directory. Each compile is its own set of processes, so compile-all's pool runs them in
 * parallel and a tool that crashes only fails its own kernel.
 */
export class LlvmToolchain implements KernelCompiler {
  readonly flavor: string;
  private readonly fingerprints = new Map<string, Promise<string>>();

  constructor(
    readonly tools: LlvmTools = findLlvmTools(),
    readonly timeoutMs = 300_000,
  ) {
    this.flavor = `llvm${tools.major}`;
  }

  fingerprint(target: TargetName): Promise<string> {
    const nv = target === 'sm_90';
    const key = nv ? 'nv' : 'amd';
    let fp = this.fingerprints.get(key);
    if (!fp) {
      fp = (async () => {
        const llc = firstLine(await runTool([this.tools.llc, '--version'], { timeoutMs: 30_000 }), /LLVM version/);
        if (!nv || !this.tools.ptxas) return `${llc}${nv ? '; no ptxas (PTX)' : ''}`;
        const ptxas = firstLine(await runTool([this.tools.ptxas, '--version'], { timeoutMs: 30_000 }), /release/);
        return `${llc}; ${ptxas}`;
      })();
      this.fingerprints.set(key, fp);
    }
    return fp;
  }

  async compile(irText: string, target: TargetName, options: { signal?: AbortSignal } = {}): Promise<CompiledCode> {
    const dir = await mkdtemp(join(tmpdir(), 'rocke-cc-'));
    const run = (argv: string[]) => runTool(argv, { timeoutMs: this.timeoutMs, signal: options.signal });
    try {
      const ll = join(dir, 'kernel.ll');
      const bc = join(dir, 'kernel.opt.bc');
      await writeFile(ll, irText);
      const triple = TRIPLE[target];
      await run([this.tools.opt, '-O3', `-mtriple=${triple}`, `-mcpu=${target}`, ll, '-o', bc]);
      if (target === 'sm_90') {
        const ptx = join(dir, 'kernel.ptx');
        await run([this.tools.llc, '-O3', `-mtriple=${triple}`, '-mcpu=sm_90', '-mattr=+ptx80', bc, '-o', ptx]);
        if (!this.tools.ptxas) return { kind: 'ptx', bytes: await readFile(ptx) };
        const cubin = join(dir, 'kernel.cubin');
        await run([this.tools.ptxas, '-arch=sm_90', ptx, '-o', cubin]);
        return { kind: 'cubin', bytes: await readFile(cubin) };
      }
      const obj = join(dir, 'kernel.o');
      const hsaco = join(dir, 'kernel.hsaco');
      await run([this.tools.llc, '-O3', `-mtriple=${triple}`, `-mcpu=${target}`, '-filetype=obj', bc, '-o', obj]);
      await run([this.tools.lld, '-shared', obj, '-o', hsaco]);
      return { kind: 'hsaco', bytes: await readFile(hsaco) };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

function firstLine(text: string, pattern: RegExp): string {
  const line = text.split('\n').find((l) => pattern.test(l)) ?? text.split('\n')[0] ?? '';
  return line.trim();
}
