/**
 * Kernel-argument layout: explicit arguments in order, each at its natural alignment, in a slot of
 * its allocation size. This is the AMDGPU explicit kernarg segment (the kernels here declare
 * `amdgpu-no-implicitarg-ptr`, so nothing follows it) and the packed parameter buffer CUDA accepts
 * through `CU_LAUNCH_PARAM_BUFFER_POINTER`. One table drives both the IR parameters and a host packer.
 */
import { alignOf, sizeOf, typeToString } from './types.js';
import type { Type } from './types.js';

export interface KernargSlot {
  readonly name: string;
  readonly type: Type;
  /** Byte offset in the argument buffer. */
  readonly offset: number;
  /** Bytes the slot occupies (allocation size: `<3 x i32>` takes 16). */
  readonly size: number;
  readonly align: number;
}

export interface KernargLayout {
  readonly slots: readonly KernargSlot[];
  /** End of the last slot. */
  readonly end: number;
  /** Buffer size to pass: `end` rounded up to 4 bytes, as llc reports `.kernarg_segment_size`. */
  readonly size: number;
  /** Largest slot alignment (at least 1). */
  readonly align: number;
}

/** Lays out kernel parameters (`{name, type}` in order). */
export function kernargLayout(params: readonly { readonly name: string; readonly type: Type }[]): KernargLayout {
  let offset = 0;
  let maxAlign = 1;
  const slots = params.map((p) => {
    if (p.type.kind === 'void' || p.type.kind === 'label') throw new TypeError(`kernel parameter ${p.name} cannot have type ${typeToString(p.type)}`);
    const align = alignOf(p.type);
    const size = sizeOf(p.type);
    offset = Math.ceil(offset / align) * align;
    const slot: KernargSlot = { name: p.name, type: p.type, offset, size, align };
    offset += size;
    maxAlign = Math.max(maxAlign, align);
    return slot;
  });
  return { slots, end: offset, size: Math.ceil(offset / 4) * 4, align: maxAlign };
}
