import type { BuiltKernel, Family, KernelCandidate } from '@rocke/ir';
import { z } from 'zod';
import { TARGET_NAMES } from '@rocke/ir';
import type { TargetName } from './llvm-toolchain.js';

/**
 * Spec of an {@link axpyFamily} kernel: `y[i] = scale * x[i] + y[i]` over `i < n`.
 * - `plain`: just that;
 * - `scratch`: x goes through a dynamically indexed 4 KiB private array (scratch / local memory);
 * - `pressure`: 96 values held live under a register cap (`amdgpu-num-vgpr`=32 / `.maxnreg 24`),
 *   so the register allocator must spill.
 * `waves_per_eu` is the AMD `amdgpu-waves-per-eu` minimum, or null for none.
 */
export const AxpySpecSchema = z
  .object({ kind: z.enum(['plain', 'scratch', 'pressure']), scale: z.number(), waves_per_eu: z.number().int().positive().nullable() })
  .strict();
export type AxpySpec = z.infer<typeof AxpySpecSchema>;

/** A deliberately broken candidate (variant `broken`): its IR does not parse. */
const BrokenSpecSchema = z.object({ index: z.number().int().nonnegative() }).strict();
type BrokenSpec = z.infer<typeof BrokenSpecSchema>;

/** Options of {@link axpyFamily}. */
export interface AxpyFamilyOptions {
  scales?: readonly number[];
  targets?: readonly TargetName[];
  /** Extra candidates whose IR does not parse; they exercise failure isolation. */
  brokenCount?: number;
}

const AMD_TARGETS: ReadonlySet<TargetName> = new Set(['gfx950', 'gfx942']);

/**
 * A small hand-written kernel family (`axpy`). It checks the toolchain and the compile-all engine
 * end to end without any conv kernel: per scale one plain kernel, on AMD also a waves_per_eu=3
 * twin (same code, so it compiles to identical code bytes), one kernel that needs scratch memory
 * and one that spills registers.
 * Not part of the default family set; select it with `--family axpy`.
 */
export function axpyFamily(options: AxpyFamilyOptions = {}): Family<AxpySpec | BrokenSpec> {
  const scales = options.scales ?? [1, 2];
  const brokenCount = options.brokenCount ?? 0;
  return {
    name: 'axpy',
    targets: options.targets ?? TARGET_NAMES,
    // The IR text is written in this file; bump when it changes.
    emitter: 'axpy/2',
    schema: z.union([AxpySpecSchema, BrokenSpecSchema]),
    candidates(target: TargetName): KernelCandidate<AxpySpec | BrokenSpec>[] {
      const amd = AMD_TARGETS.has(target);
      const out: KernelCandidate<AxpySpec | BrokenSpec>[] = [];
      for (const scale of scales) {
        out.push(candidate({ kind: 'plain', scale, waves_per_eu: null }));
        if (amd) out.push(candidate({ kind: 'plain', scale, waves_per_eu: 3 }));
      }
      out.push(candidate({ kind: 'scratch', scale: scales[0] ?? 1, waves_per_eu: null }));
      out.push(candidate({ kind: 'pressure', scale: scales[0] ?? 1, waves_per_eu: null }));
      for (let i = 0; i < brokenCount; i++) out.push({ variant: 'broken', spec: { index: i } });
      return out;
    },
    build({ spec }: KernelCandidate<AxpySpec | BrokenSpec>, target: TargetName): BuiltKernel {
      if ('index' in spec) return { kernelName: `axpy_broken_${spec.index}`, ir: `; deliberately invalid IR\ndefine void @axpy_broken_${spec.index}( {\n` };
      return emit(spec, target);
    },
    wavesPerEu(spec: AxpySpec | BrokenSpec) {
      if ('index' in spec) return { wavesPerEu: null, rest: spec };
      const { waves_per_eu: wavesPerEu, ...rest } = spec;
      return { wavesPerEu, rest };
    },
  };
}

function candidate(spec: AxpySpec): KernelCandidate<AxpySpec> {
  return { variant: spec.kind, spec: { ...spec } };
}

/** LLVM's exact hex spelling of a float constant (always valid, no rounding questions). */
function floatConst(v: number): string {
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, Math.fround(v));
  return `0x${buf.getBigUint64(0).toString(16).toUpperCase().padStart(16, '0')}`;
}

function emit(spec: AxpySpec, target: TargetName): BuiltKernel {
  const amd = AMD_TARGETS.has(target);
  const kernelName = [
    'axpy',
    `s${String(spec.scale).replace(/[^0-9a-zA-Z]/g, '_')}`,
    ...(spec.kind === 'plain' ? [] : [spec.kind]),
    ...(spec.waves_per_eu === null ? [] : [`we${spec.waves_per_eu}`]),
  ].join('_');
  const g = 'ptr addrspace(1)';
  const tid = amd ? '@llvm.amdgcn.workitem.id.x' : '@llvm.nvvm.read.ptx.sreg.tid.x';
  const bid = amd ? '@llvm.amdgcn.workgroup.id.x' : '@llvm.nvvm.read.ptx.sreg.ctaid.x';
  const cc = amd ? 'amdgpu_kernel' : 'ptx_kernel';
  const pa = amd ? ', addrspace(5)' : '';
  const pp = amd ? 'ptr addrspace(5)' : 'ptr';
  const attrList = amd ? ['"amdgpu-flat-work-group-size"="1,256"'] : ['"nvvm.maxntid"="256"'];
  if (amd && spec.waves_per_eu !== null) attrList.push(`"amdgpu-waves-per-eu"="${spec.waves_per_eu}"`);
  if (spec.kind === 'pressure') attrList.push(amd ? '"amdgpu-num-vgpr"="32"' : '"nvvm.maxnreg"="24"');
  const attrs = attrList.join(' ');
  const lines = [
    `target triple = "${amd ? 'amdgcn-amd-amdhsa' : 'nvptx64-nvidia-cuda'}"`,
    '',
    `define ${cc} void @${kernelName}(${g} noalias %x, ${g} noalias %y, i32 %n) #0 {`,
    'entry:',
    `  %tid = call i32 ${tid}()`,
    `  %bid = call i32 ${bid}()`,
    '  %base = mul i32 %bid, 256',
    '  %i = add i32 %base, %tid',
    '  %in = icmp slt i32 %i, %n',
    '  br i1 %in, label %body, label %exit',
    'body:',
    `  %px = getelementptr float, ${g} %x, i32 %i`,
    `  %py = getelementptr float, ${g} %y, i32 %i`,
    `  %vx = load float, ${g} %px, align 4`,
    `  %vy = load float, ${g} %py, align 4`,
  ];
  let xv = '%vx';
  if (spec.kind === 'pressure') {
    // 96 volatile loads (kept in order) multiplied in reverse: all 96 values are live at once.
    const n = 96;
    for (let k = 0; k < n; k++) {
      lines.push(`  %pp${k} = getelementptr float, ${g} %x, i32 ${k}`, `  %pv${k} = load volatile float, ${g} %pp${k}, align 4`);
    }
    let acc = '%pv0';
    for (let k = 1; k < n; k++) {
      lines.push(`  %pa${k} = fmul float ${acc}, %pv${n - k}`);
      acc = `%pa${k}`;
    }
    xv = acc;
  }
  if (spec.kind === 'scratch') {
    // A 1024-float private array written in a loop and read at a data-dependent index cannot be
    // promoted to registers, so the kernel needs scratch (AMD) / local memory (NVIDIA).
    lines.push(
      `  %buf = alloca [1024 x float], align 4${pa}`,
      '  br label %fill',
      'fill:',
      '  %k = phi i32 [ 0, %body ], [ %k1, %fill ]',
      '  %kf = sitofp i32 %k to float',
      '  %val = fmul float %vx, %kf',
      `  %slot = getelementptr [1024 x float], ${pp} %buf, i32 0, i32 %k`,
      `  store volatile float %val, ${pp} %slot, align 4`,
      '  %k1 = add i32 %k, 1',
      '  %more = icmp slt i32 %k1, 1024',
      '  br i1 %more, label %fill, label %read',
      'read:',
      '  %bits = bitcast float %vy to i32',
      '  %j = and i32 %bits, 1023',
      `  %rslot = getelementptr [1024 x float], ${pp} %buf, i32 0, i32 %j`,
      `  %vr = load volatile float, ${pp} %rslot, align 4`,
    );
    xv = '%vr';
  }
  lines.push(
    `  %s = call float @llvm.fma.f32(float ${xv}, float ${floatConst(spec.scale)}, float %vy)`,
    `  store float %s, ${g} %py, align 4`,
    '  br label %exit',
    'exit:',
    '  ret void',
    '}',
    '',
    `declare i32 ${tid}()`,
    `declare i32 ${bid}()`,
    'declare float @llvm.fma.f32(float, float, float)',
    '',
    `attributes #0 = { ${attrs} }`,
    '',
  );
  return { kernelName, ir: lines.join('\n') };
}
