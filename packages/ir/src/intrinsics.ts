/** Overloaded-intrinsic name suffixes (`.v4f32`, `.p8`, ...) as LLVM mangles them. */
import type { Type } from './types.js';
import { typeToString } from './types.js';

/** The mangled suffix LLVM uses for an overloaded intrinsic type parameter. */
export function mangleType(t: Type): string {
  switch (t.kind) {
    case 'int':
      return `i${t.bits}`;
    case 'float':
      return t.name === 'half' ? 'f16' : t.name === 'bfloat' ? 'bf16' : t.name === 'float' ? 'f32' : 'f64';
    case 'ptr':
      return `p${t.addrspace}`;
    case 'vector':
      return `v${t.count}${mangleType(t.elem)}`;
    default:
      throw new TypeError(`no intrinsic mangling for ${typeToString(t)}`);
  }
}
