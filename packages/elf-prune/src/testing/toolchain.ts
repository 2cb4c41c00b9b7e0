// Test-only helpers: compile the package's .ll fixtures with LLVM 22 (and ptxas) into real
// code objects during the test run. Not exported from the package.
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

const llvmDirs = (): string[] =>
  [process.env['ROCKE_LLVM_DIR'] ? join(process.env['ROCKE_LLVM_DIR'], 'bin') : '', '/usr/lib/llvm-22/bin'].filter((d) => d !== '');

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Full path of a tool found on `path` (default $PATH) or in `extraDirs`, or null. */
export function findTool(names: string[], extraDirs: string[] = [], path = process.env['PATH'] ?? ''): string | null {
  const dirs = [...path.split(delimiter), ...extraDirs].filter((d) => d !== '');
  for (const name of names) for (const dir of dirs) if (executable(join(dir, name))) return join(dir, name);
  return null;
}

/** LLVM 22 tools; throws a clear error (failing the suite, not skipping it) when one is missing. */
export function llvm22(
  search: { path?: string; dirs?: string[] } = {},
): { llc: string; lld: string; readelf: string; objdump: string } {
  const dirs = search.dirs ?? llvmDirs();
  const need = (tool: string): string => {
    const path = findTool([`${tool}-22`], [], search.path) ?? findTool([tool], dirs, '');
    if (!path) {
      throw new Error(
        `${tool}-22 not found on PATH or in ${dirs.join(', ') || '(no LLVM directory)'}: these tests compile real code objects ` +
          'with LLVM 22 (CI installs llvm-22 and lld-22; set ROCKE_LLVM_DIR to use another install)',
      );
    }
    return path;
  };
  return { llc: need('llc'), lld: need('ld.lld'), readelf: need('llvm-readelf'), objdump: need('llvm-objdump') };
}

/** ptxas, or null when absent (NVIDIA tests then skip with that reason). */
export function findPtxas(): string | null {
  return findTool(['ptxas'], ['/usr/local/cuda/bin']);
}

/** Reads a fixture from packages/elf-prune/fixtures. */
export function fixture(name: string): string {
  return readFileSync(new URL(`../../fixtures/${name}`, import.meta.url), 'utf8');
}

/** Adds a function attribute to attribute group #0 (how a spec's waves_per_eu reaches the IR). */
export function withAttribute(ll: string, attribute: string): string {
  const out = ll.replace(/^attributes #0 = \{ /m, `attributes #0 = { ${attribute} `);
  if (out === ll) throw new Error('fixture has no "attributes #0 = { ... }" line');
  return out;
}

/** A scratch directory removed by `dispose`. */
export function scratch(): { dir: string; dispose: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'elf-prune-'));
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

const run = (tool: string, args: string[]): string => execFileSync(tool, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** `.amdhsa_*` directives that llvm-objdump prints for a kernel descriptor symbol. */
export function objdumpDescriptor(path: string, kdSymbol: string, mcpu = 'gfx950'): Map<string, number> {
  const text = run(llvm22().objdump, ['-D', `--mcpu=${mcpu}`, `--disassemble-symbols=${kdSymbol}`, path]);
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^\s*\.amdhsa_([a-z0-9_]+) (-?\d+)\s*$/gm)) if (m[1] && m[2]) out.set(m[1], Number(m[2]));
  if (out.size === 0) throw new Error(`llvm-objdump printed no .amdhsa_ directives for ${kdSymbol}`);
  return out;
}

/**
 * A symbol's file bytes located with llvm-readelf's section and symbol tables (independent of
 * this package's reader), for cross-checking digests.
 */
export function symbolBytesByReadelf(path: string, symbol: string): Uint8Array {
  const text = run(llvm22().readelf, ['-S', '-s', '--wide', path]);
  const sym = new RegExp(`^\\s*\\d+: ([0-9a-f]+)\\s+(\\d+)\\s+FUNC\\s+\\w+\\s+\\w+(?:\\s+\\[<other: 0x[0-9a-f]+>\\])?\\s+(\\d+) ${symbol.replace(/[.$]/g, '\\$&')}$`, 'm').exec(text);
  if (!sym?.[1] || !sym[2] || !sym[3]) throw new Error(`llvm-readelf shows no FUNC symbol ${symbol}`);
  const sec = new RegExp(`^\\s*\\[\\s*${sym[3]}\\] \\S+\\s+\\S+\\s+([0-9a-f]+) ([0-9a-f]+) `, 'm').exec(text);
  if (!sec?.[1] || !sec[2]) throw new Error(`llvm-readelf shows no section ${sym[3]}`);
  const start = parseInt(sec[2], 16) + parseInt(sym[1], 16) - parseInt(sec[1], 16);
  return new Uint8Array(readFileSync(path)).subarray(start, start + Number(sym[2]));
}

/** An AMDGPU code object linked the way the toolchain does it (llc -filetype=obj, ld.lld -shared). */
export interface AmdBuild {
  hsaco: Uint8Array;
  path: string;
  /** The relocatable object llc wrote before linking. */
  object: Uint8Array;
  /** `llc -filetype=asm` text, for its `; Occupancy:` comments. */
  asm: string;
  /** `llvm-readelf --notes` output of the linked object. */
  notes: string;
}

export function compileAmd(dir: string, name: string, ll: string, mcpu = 'gfx950'): AmdBuild {
  const tools = llvm22();
  const src = join(dir, `${name}.ll`);
  writeFileSync(src, ll);
  const obj = join(dir, `${name}.o`);
  const path = join(dir, `${name}.hsaco`);
  const triple = ['-mtriple=amdgcn-amd-amdhsa', `-mcpu=${mcpu}`];
  run(tools.llc, [...triple, '-filetype=obj', src, '-o', obj]);
  run(tools.lld, ['-shared', obj, '-o', path]);
  const asm = run(tools.llc, [...triple, '-filetype=asm', src, '-o', '-']);
  const notes = run(tools.readelf, ['--notes', path]);
  return { hsaco: new Uint8Array(readFileSync(path)), path, object: new Uint8Array(readFileSync(obj)), asm, notes };
}

/** A cubin built with llc (PTX 8.0, sm_90) and ptxas -v, with ptxas's report. */
export interface NvBuild {
  cubin: Uint8Array;
  ptxasLog: string;
}

export function compileNv(dir: string, name: string, ll: string, ptxas: string): NvBuild {
  const { llc } = llvm22();
  const src = join(dir, `${name}.ll`);
  const ptx = join(dir, `${name}.ptx`);
  const cubin = join(dir, `${name}.cubin`);
  writeFileSync(src, ll);
  run(llc, ['-mtriple=nvptx64-nvidia-cuda', '-mcpu=sm_90', '-mattr=+ptx80', src, '-o', ptx]);
  // ptxas -v writes its report to stderr.
  const res = spawnSync(ptxas, ['-arch=sm_90', '-v', ptx, '-o', cubin], { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`ptxas failed (${String(res.status)}): ${res.stderr}`);
  return { cubin: new Uint8Array(readFileSync(cubin)), ptxasLog: `${res.stdout}${res.stderr}` };
}

/**
 * Per-kernel scalar keys of `llvm-readelf --notes` YAML: `{ kernelName: { '.vgpr_count': '64', ... } }`.
 * Only top-level kernel keys (4-space indent) are read; `.args` entries are skipped.
 */
export function readelfKernels(notes: string): Map<string, Map<string, string>> {
  const kernels = new Map<string, Map<string, string>>();
  let current: Map<string, string> | null = null;
  for (const line of notes.split('\n')) {
    const m = /^ {2}(?:- | {2})(\.[a-z_0-9]+):\s+(\S.*)?$/.exec(line);
    if (!m) continue;
    if (line.startsWith('  - ')) {
      current = new Map();
    }
    const [, key, value] = m;
    if (current && key !== undefined) current.set(key, (value ?? '').trim());
    if (current && key === '.name' && value) kernels.set(value.trim(), current);
  }
  return kernels;
}

/** `; Occupancy: N` per function from llc assembly, in function order. */
export function asmOccupancy(asm: string): Map<string, number> {
  const out = new Map<string, number>();
  let fn = '';
  for (const line of asm.split('\n')) {
    const label = /^([A-Za-z_.$][\w.$]*):\s*(?:;.*)?$/.exec(line);
    if (label?.[1] && !label[1].startsWith('.')) fn = label[1];
    const occ = /^\s*; Occupancy: (\d+)/.exec(line);
    if (occ?.[1] && fn) out.set(fn, Number(occ[1]));
  }
  return out;
}

/** `ptxas -v` per-function report: registers, stack frame, spill bytes, smem. */
export function ptxasReport(log: string): Map<string, { registers: number; frame: number; spillStores: number; smem: number }> {
  const out = new Map<string, { registers: number; frame: number; spillStores: number; smem: number }>();
  let fn = '';
  for (const line of log.split('\n')) {
    const props = /Function properties for (\S+)/.exec(line);
    if (props?.[1]) {
      fn = props[1];
      out.set(fn, { registers: -1, frame: -1, spillStores: -1, smem: 0 });
      continue;
    }
    const entry = out.get(fn);
    if (!entry) continue;
    const frame = /(\d+) bytes stack frame, (\d+) bytes spill stores/.exec(line);
    if (frame) {
      entry.frame = Number(frame[1]);
      entry.spillStores = Number(frame[2]);
    }
    const used = /Used (\d+) registers/.exec(line);
    if (used) entry.registers = Number(used[1]);
    const smem = /(\d+) bytes smem/.exec(line);
    if (smem) entry.smem = Number(smem[1]);
  }
  return out;
}
