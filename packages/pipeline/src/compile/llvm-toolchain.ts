import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findToolchain, getTarget, TARGET_NAMES, ToolError, ToolchainError, type Toolchain, type TargetName as IrTargetName } from '@rocke/ir';
import type { CodeKind } from '../cache/cache.js';

export { ToolError };

/** One of {@link TARGETS}: @rocke/ir's target names. */
export type TargetName = IrTargetName;
/** Targets the pipeline compiles for: every target @rocke/ir defines. */
export const TARGETS: readonly TargetName[] = TARGET_NAMES;

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

/** Runs a tool, resolves with stdout; rejects with @rocke/ir's ToolError on failure, timeout or abort. */
function runTool(argv: string[], options: { timeoutMs: number; signal?: AbortSignal | undefined }): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const [cmd, ...args] = argv as [string, ...string[]];
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: options.timeoutMs, killSignal: 'SIGKILL', signal: options.signal });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', (e) => reject(new ToolError(argv, `${e.message}${err ? `\n${err}` : ''}`, null)));
    child.on('close', (status, signal) => {
      if (status === 0) resolvePromise(out);
      else reject(new ToolError(argv, signal ? `killed by ${signal}${err ? `\n${err}` : ''}` : err, status));
    });
  });
}

/**
 * The default {@link KernelCompiler}. Tools come from @rocke/ir's `findToolchain()` and target
 * flags (triple, cpu, features) from its `getTarget()`, and the steps are those of @rocke/ir's
 * `compile()`: `opt -O3`, `llc`, then `ld.lld -shared` (AMD, a .hsaco) or `ptxas -arch=sm_90`
 * (NVIDIA, a cubin; PTX when ptxas is absent). The tests check the result against `compile()`:
 * identical .hsaco bytes, identical sm_90 kernel code (the cubins differ only in the note where
 * ptxas records its options; `compile()` adds `-v`).
 *
 * Why not call `compile()`: it has no timeout and no abort signal. compile-all needs both: Ctrl-C
 * kills the running tools and keeps finished entries, and a hung tool fails only its kernel. Each
 * compile is its own set of child processes in a private temp dir.
 */
export class LlvmToolchain implements KernelCompiler {
  readonly flavor: string;
  private readonly fingerprints = new Map<string, Promise<string>>();

  constructor(
    readonly tools: Toolchain = findToolchain(),
    readonly timeoutMs = 300_000,
  ) {
    this.flavor = getTarget('gfx950').flavor;
    const need = Number(this.flavor.replace('llvm', ''));
    if (tools.major < need) throw new ToolchainError(`IR flavor ${this.flavor} needs LLVM >= ${need}, found LLVM ${tools.version} (${tools.llc})`);
  }

  fingerprint(target: TargetName): Promise<string> {
    const nv = getTarget(target).vendor === 'nvidia';
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
    const t = getTarget(target);
    const flags = [`-mtriple=${t.triple}`, `-mcpu=${t.cpu}`, ...(t.features ? [`-mattr=${t.features}`] : [])];
    const dir = await mkdtemp(join(tmpdir(), 'rocke-cc-'));
    const run = (argv: string[]) => runTool(argv, { timeoutMs: this.timeoutMs, signal: options.signal });
    try {
      const ll = join(dir, 'kernel.ll');
      const bc = join(dir, 'kernel.opt.bc');
      await writeFile(ll, irText);
      await run([this.tools.opt, '-O3', ...flags, ll, '-o', bc]);
      if (t.vendor === 'nvidia') {
        const ptx = join(dir, 'kernel.ptx');
        await run([this.tools.llc, ...flags, bc, '-o', ptx]);
        if (!this.tools.ptxas) return { kind: 'ptx', bytes: await readFile(ptx) };
        const cubin = join(dir, 'kernel.cubin');
        await run([this.tools.ptxas, `-arch=${t.cpu}`, ptx, '-o', cubin]);
        return { kind: 'cubin', bytes: await readFile(cubin) };
      }
      const obj = join(dir, 'kernel.o');
      const hsaco = join(dir, 'kernel.hsaco');
      await run([this.tools.llc, ...flags, '-filetype=obj', bc, '-o', obj]);
      await run([this.tools.ldLld, '-shared', obj, '-o', hsaco]);
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
