import { compile, findToolchain, getTarget, sweepStaleTempDirs, TOOLCHAIN_TEMP_PREFIX, toolchainFingerprint, ToolError, ToolchainError, type Toolchain, type TargetName } from '@rocke/ir';
import type { CodeKind } from '../cache/cache.js';

export { ToolError };
/** A target the pipeline compiles for: every target @rocke/ir defines (`TARGET_NAMES`, `isTargetName`). */
export type { TargetName };

let staleSwept = false;

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

/**
 * The default {@link KernelCompiler}: @rocke/ir's `compile()` (`opt -O3`, `llc`, then `ld.lld
 * -shared` for AMD, a .hsaco, or `ptxas` for NVIDIA, a cubin; PTX when ptxas is absent) with a
 * per-tool timeout and compile-all's abort signal, so Ctrl-C kills the running tools and keeps
 * finished entries, and a hung tool fails only its kernel. ptxas runs without `-v` (the cubin
 * records the flag; the cache's code bytes stay those of a plain `ptxas`). Each compile's temp dir
 * is removed when it ends or at process exit; the first toolchain of a process sweeps those that
 * killed processes left.
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
    // Compile temp dirs a killed run left (their process is gone); once per process.
    if (!staleSwept) sweepStaleTempDirs(TOOLCHAIN_TEMP_PREFIX);
    staleSwept = true;
  }

  fingerprint(target: TargetName): Promise<string> {
    const vendor = getTarget(target).vendor;
    let fp = this.fingerprints.get(vendor);
    if (!fp) {
      fp = toolchainFingerprint(vendor, this.tools);
      this.fingerprints.set(vendor, fp);
    }
    return fp;
  }

  async compile(irText: string, target: TargetName, options: { signal?: AbortSignal } = {}): Promise<CompiledCode> {
    const r = await compile(irText, getTarget(target), { toolchain: this.tools, ptxasVerbose: false, timeoutMs: this.timeoutMs, ...(options.signal ? { signal: options.signal } : {}) });
    if (r.vendor === 'amd') return { kind: 'hsaco', bytes: r.object };
    return r.cubin ? { kind: 'cubin', bytes: r.cubin } : { kind: 'ptx', bytes: new TextEncoder().encode(r.ptx) };
  }
}
