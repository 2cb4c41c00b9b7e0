/** Modules: triple, data layout, flags, globals and functions, with intrinsics interned by name. */
import type { Argument, Block, CallingConv, Constant, FnAttribute, GlobalVariable, IrFunction, ModuleFlag } from './ir.js';
import { ptr, sizeOf, typeEquals, typeToString } from './types.js';
import type { FunctionType, Type } from './types.js';

/** A named parameter for {@link Module.addFunction}. */
export interface ParamSpec {
  readonly name: string;
  readonly type: Type;
  /** Parameter attributes printed before the name, e.g. `['noalias', 'readonly']`. */
  readonly attributes?: readonly string[];
}

export interface FunctionOptions {
  readonly callingConv?: CallingConv;
  readonly attributes?: readonly FnAttribute[];
  readonly linkage?: 'external' | 'internal';
}

export interface GlobalOptions {
  readonly name: string;
  readonly valueType: Type;
  readonly addrspace?: number;
  /** Default `internal` with a `poison` initializer; `external` has no initializer (dynamic LDS). */
  readonly linkage?: 'internal' | 'external' | 'private';
  readonly init?: Constant;
  readonly align?: number;
  readonly constant?: boolean;
}

const identifier = /^[-a-zA-Z$._][-a-zA-Z$._0-9]*$/;

/** A whole LLVM module. All state lives on the instance; there is no module-level mutable state. */
export class Module {
  triple: string | undefined;
  dataLayout: string | undefined;
  readonly flags: ModuleFlag[] = [];
  readonly globals: GlobalVariable[] = [];
  readonly functions: IrFunction[] = [];

  constructor(options: { triple?: string; dataLayout?: string } = {}) {
    this.triple = options.triple;
    this.dataLayout = options.dataLayout;
  }

  private checkFreshName(name: string): void {
    if (!name) throw new Error('global names must be non-empty');
    if (!identifier.test(name)) throw new Error(`invalid symbol name ${JSON.stringify(name)}: use letters, digits, '.', '_', '-', '$'`);
    if (this.functions.some((f) => f.name === name) || this.globals.some((g) => g.name === name)) throw new Error(`symbol @${name} is already defined in this module`);
  }

  /** Adds a module flag (`!llvm.module.flags`). Keys must be unique. */
  addFlag(behavior: number, key: string, value: number): void {
    if (this.flags.some((f) => f.key === key)) throw new Error(`module flag ${JSON.stringify(key)} is already set`);
    this.flags.push({ behavior, key, value });
  }

  /** Adds a global variable (LDS arrays: `addrspace: 3`). */
  addGlobal(o: GlobalOptions): GlobalVariable {
    this.checkFreshName(o.name);
    const addrspace = o.addrspace ?? 0;
    const linkage = o.linkage ?? 'internal';
    if (linkage === 'external' && o.init) throw new Error(`external global @${o.name} cannot have an initializer`);
    if (o.init && !typeEquals(o.init.type, o.valueType)) throw new TypeError(`initializer of @${o.name} has type ${typeToString(o.init.type)}, expected ${typeToString(o.valueType)}`);
    const align = o.align ?? 16;
    if (!Number.isInteger(align) || align < 1 || (align & (align - 1)) !== 0) throw new RangeError(`alignment must be a power of two, got ${align}`);
    const g: GlobalVariable = {
      kind: 'global',
      name: o.name,
      type: ptr(addrspace),
      valueType: o.valueType,
      addrspace,
      linkage,
      init: linkage === 'external' ? undefined : (o.init ?? { kind: 'const.poison', type: o.valueType }),
      align,
      constant: o.constant ?? false,
    };
    this.globals.push(g);
    return g;
  }

  /** Defines a new function with named parameters; add blocks with a {@link Builder}. */
  addFunction(name: string, ret: Type, params: readonly ParamSpec[], options: FunctionOptions = {}): IrFunction {
    this.checkFreshName(name);
    const seen = new Set<string>();
    for (const p of params) {
      if (!identifier.test(p.name)) throw new Error(`invalid parameter name ${JSON.stringify(p.name)} in @${name}`);
      if (seen.has(p.name)) throw new Error(`duplicate parameter name %${p.name} in @${name}`);
      seen.add(p.name);
    }
    const args: Argument[] = params.map((p, index) => ({ kind: 'arg', type: p.type, index, name: p.name, attributes: [...(p.attributes ?? [])] }));
    const fn: IrFunction = {
      kind: 'function',
      name,
      type: ptr(0),
      sig: { ret, params: params.map((p) => p.type) },
      args,
      blocks: [] as Block[],
      callingConv: options.callingConv,
      attributes: [...(options.attributes ?? [])],
      linkage: options.linkage ?? 'external',
    };
    this.functions.push(fn);
    return fn;
  }

  /**
   * Declares an external function (an intrinsic when the name starts with `llvm.`). Interned by
   * name: a second call returns the same declaration, and a different signature is an error.
   */
  declare(name: string, ret: Type, params: readonly Type[]): IrFunction {
    const existing = this.functions.find((f) => f.name === name);
    if (existing) {
      const want: FunctionType = { ret, params };
      if (!sameSig(existing.sig, want)) throw new TypeError(`@${name} is already declared as ${sigToString(existing.sig)}, not ${sigToString(want)}`);
      return existing;
    }
    this.checkFreshName(name);
    const fn: IrFunction = {
      kind: 'function',
      name,
      type: ptr(0),
      sig: { ret, params: [...params] },
      args: params.map((type, index) => ({ kind: 'arg', type, index, name: `p${index}`, attributes: [] })),
      blocks: [],
      callingConv: undefined,
      attributes: [],
      linkage: 'external',
    };
    this.functions.push(fn);
    return fn;
  }

  /** Looks a function up by name. */
  getFunction(name: string): IrFunction | undefined {
    return this.functions.find((f) => f.name === name);
  }

  /**
   * Bytes of statically sized LDS (addrspace 3 globals), each aligned to its alignment, in
   * declaration order. Dynamic LDS (`[0 x T]` externals) adds nothing; it is sized at launch.
   */
  staticLdsBytes(): number {
    let total = 0;
    for (const g of this.globals) {
      if (g.addrspace !== 3) continue;
      total = Math.ceil(total / g.align) * g.align + sizeOf(g.valueType);
    }
    return total;
  }

  /** Looks a global up by name. */
  getGlobal(name: string): GlobalVariable | undefined {
    return this.globals.find((g) => g.name === name);
  }
}

function sameSig(a: FunctionType, b: FunctionType): boolean {
  return typeEquals(a.ret, b.ret) && a.params.length === b.params.length && a.params.every((p, i) => typeEquals(p, b.params[i]!));
}

/** `ret (p0, p1)` for messages. */
export function sigToString(s: FunctionType): string {
  return `${typeToString(s.ret)} (${s.params.map(typeToString).join(', ')})`;
}
