/**
 * The deterministic printer: one textual form per module. Names are assigned in print order
 * (arguments, then each block label and its instructions); unnamed results are numbered
 * `%0, %1, ...`; name hints are sanitized and made unique with a numeric suffix. Attribute
 * groups and metadata are numbered in first-use order. Float constants use LLVM's hex forms.
 * Nothing depends on object identity hashes, time, paths or iteration over plain objects.
 */
import { floatHex } from './float.js';
import type { Block, Constant, FnAttribute, GlobalVariable, Instruction, IrFunction, Value } from './ir.js';
import { isTerminator } from './ir.js';
import type { Module } from './module.js';
import { typeToString } from './types.js';
import type { Type } from './types.js';

const identifier = /^[-a-zA-Z$._][-a-zA-Z$._0-9]*$/;
const keywordAttr = /^[a-z_]+(\([^)]*\))?$/;

/** Escapes a string for `"..."` in LLVM text (`\XX` for quotes, backslashes and non-printables). */
export function escapeLlvmString(s: string): string {
  let out = '';
  for (const byte of new TextEncoder().encode(s)) {
    if (byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c) out += String.fromCharCode(byte);
    else out += `\\${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function symbol(sigil: '@' | '%', name: string): string {
  return identifier.test(name) ? `${sigil}${name}` : `${sigil}"${escapeLlvmString(name)}"`;
}

/** Prints a constant without its type. */
export function constantToString(c: Constant): string {
  switch (c.kind) {
    case 'const.int':
      return c.type.bits === 1 ? (c.value === 0n ? 'false' : 'true') : c.value.toString();
    case 'const.float':
      return floatHex(c.value, c.type.name);
    case 'const.null':
      return 'null';
    case 'const.zero':
      return 'zeroinitializer';
    case 'const.poison':
      return 'poison';
    case 'const.undef':
      return 'undef';
    case 'const.vector':
      return `<${c.elems.map((e) => `${typeToString(e.type)} ${constantToString(e)}`).join(', ')}>`;
  }
}

function attrToString(a: FnAttribute): string {
  if (a.value !== undefined) return `"${escapeLlvmString(a.key)}"="${escapeLlvmString(a.value)}"`;
  return keywordAttr.test(a.key) ? a.key : `"${escapeLlvmString(a.key)}"`;
}

/** Per-function local names. */
class LocalNames {
  private readonly used = new Set<string>();
  private readonly names = new Map<Value | Block, string>();
  private next = 0;

  named(v: Value | Block, hint: string): void {
    let base = hint.replace(/[^-a-zA-Z$._0-9]/g, '_');
    if (base === '' || /^[0-9]/.test(base)) base = `_${base}`;
    let name = base;
    for (let n = 1; this.used.has(name); n++) name = `${base}${n}`;
    this.used.add(name);
    this.names.set(v, `%${name}`);
  }

  numbered(v: Value): void {
    this.names.set(v, `%${this.next++}`);
  }

  get(v: Value | Block, fn: IrFunction): string {
    const n = this.names.get(v);
    if (n === undefined) {
      const what = v.kind === 'block' ? `block ${v.name}` : v.kind === 'inst' ? `instruction ${v.op}${v.name ? ` (${v.name})` : ''}` : v.kind;
      throw new Error(`@${fn.name} uses ${what} that is not part of this function (was it built in another function or never inserted?)`);
    }
    return n;
  }
}

class ModulePrinter {
  private readonly attrGroups = new Map<string, number>();
  private names = new LocalNames();
  private fn: IrFunction | undefined;

  constructor(private readonly module: Module) {}

  print(): string {
    const m = this.module;
    const out: string[] = [];
    if (m.dataLayout !== undefined) out.push(`target datalayout = "${escapeLlvmString(m.dataLayout)}"`);
    if (m.triple !== undefined) out.push(`target triple = "${escapeLlvmString(m.triple)}"`);
    if (out.length) out.push('');
    if (m.globals.length) {
      for (const g of m.globals) out.push(this.global(g));
      out.push('');
    }
    const decls = m.functions.filter((f) => f.blocks.length === 0);
    const defs = m.functions.filter((f) => f.blocks.length > 0);
    if (decls.length) {
      for (const f of decls) out.push(this.declaration(f));
      out.push('');
    }
    for (const f of defs) {
      out.push(...this.definition(f));
      out.push('');
    }
    if (this.attrGroups.size) {
      for (const [text, n] of this.attrGroups) out.push(`attributes #${n} = { ${text} }`);
      out.push('');
    }
    if (m.flags.length) {
      out.push(`!llvm.module.flags = !{${m.flags.map((_, n) => `!${n}`).join(', ')}}`);
      m.flags.forEach((f, n) => out.push(`!${n} = !{i32 ${f.behavior}, !"${escapeLlvmString(f.key)}", i32 ${f.value}}`));
      out.push('');
    }
    while (out.length && out[out.length - 1] === '') out.pop();
    return `${out.join('\n')}\n`;
  }

  private global(g: GlobalVariable): string {
    const as = g.addrspace === 0 ? '' : ` addrspace(${g.addrspace})`;
    const kw = g.constant ? 'constant' : 'global';
    const init = g.init ? ` ${constantToString(g.init)}` : '';
    return `${symbol('@', g.name)} = ${g.linkage}${as} ${kw} ${typeToString(g.valueType)}${init}, align ${g.align}`;
  }

  private declaration(f: IrFunction): string {
    return `declare ${typeToString(f.sig.ret)} ${symbol('@', f.name)}(${f.sig.params.map(typeToString).join(', ')})${this.attrRef(f.attributes)}`;
  }

  private attrRef(attrs: readonly FnAttribute[]): string {
    if (attrs.length === 0) return '';
    const text = attrs.map(attrToString).join(' ');
    let n = this.attrGroups.get(text);
    if (n === undefined) {
      n = this.attrGroups.size;
      this.attrGroups.set(text, n);
    }
    return ` #${n}`;
  }

  private definition(f: IrFunction): string[] {
    this.fn = f;
    this.names = new LocalNames();
    for (const a of f.args) this.names.named(a, a.name);
    for (const b of f.blocks) {
      this.names.named(b, b.name);
      for (const i of b.instructions) {
        if (i.type.kind === 'void') continue;
        if (i.name !== undefined) this.names.named(i, i.name);
        else this.names.numbered(i);
      }
    }
    const linkage = f.linkage === 'internal' ? 'internal ' : '';
    const cc = f.callingConv ? `${f.callingConv} ` : '';
    const params = f.args.map((a) => [typeToString(a.type), ...a.attributes, this.names.get(a, f)].join(' ')).join(', ');
    const lines = [`define ${linkage}${cc}${typeToString(f.sig.ret)} ${symbol('@', f.name)}(${params})${this.attrRef(f.attributes)} {`];
    f.blocks.forEach((b, n) => {
      if (n > 0) lines.push('');
      lines.push(`${this.names.get(b, f).slice(1)}:`);
      const last = b.instructions[b.instructions.length - 1];
      if (!last || !isTerminator(last)) throw new Error(`block ${b.name} of @${f.name} does not end in a terminator (br, ret or unreachable)`);
      for (const i of b.instructions) lines.push(`  ${this.instruction(i)}`);
    });
    lines.push('}');
    this.fn = undefined;
    return lines;
  }

  private ref(v: Value | Block): string {
    switch (v.kind) {
      case 'global':
      case 'function':
        return symbol('@', v.name);
      case 'arg':
      case 'inst':
      case 'block':
        return this.names.get(v, this.fn!);
      default:
        return constantToString(v);
    }
  }

  private typed(v: Value): string {
    return `${typeToString(v.type)} ${this.ref(v)}`;
  }

  private instruction(i: Instruction): string {
    const lhs = i.type.kind === 'void' ? '' : `${this.ref(i)} = `;
    return lhs + this.body(i);
  }

  private body(i: Instruction): string {
    const t = (x: Type) => typeToString(x);
    const scope = (s: string | undefined) => (s === undefined ? '' : `syncscope("${escapeLlvmString(s)}") `);
    switch (i.op) {
      case 'fneg':
        return `fneg ${[...i.flags, this.typed(i.operand)].join(' ')}`;
      case 'trunc': case 'zext': case 'sext': case 'fptrunc': case 'fpext': case 'fptoui': case 'fptosi':
      case 'uitofp': case 'sitofp': case 'bitcast': case 'ptrtoint': case 'inttoptr': case 'addrspacecast':
        return `${i.op} ${this.typed(i.value)} to ${t(i.type)}`;
      case 'gep':
        return `getelementptr ${i.inbounds ? 'inbounds ' : ''}${t(i.sourceType)}, ${[i.base, ...i.indices].map((v) => this.typed(v)).join(', ')}`;
      case 'load':
        return `load ${i.volatile ? 'volatile ' : ''}${t(i.type)}, ${this.typed(i.ptr)}, align ${i.align}`;
      case 'store':
        return `store ${i.volatile ? 'volatile ' : ''}${this.typed(i.value)}, ${this.typed(i.ptr)}, align ${i.align}`;
      case 'icmp': case 'fcmp':
        return `${i.op} ${i.pred} ${this.typed(i.lhs)}, ${this.ref(i.rhs)}`;
      case 'select':
        return `select ${this.typed(i.cond)}, ${this.typed(i.ifTrue)}, ${this.typed(i.ifFalse)}`;
      case 'phi':
        if (i.incoming.length === 0) throw new Error(`phi ${i.name ?? ''} in @${this.fn!.name} has no incoming values`);
        return `phi ${t(i.type)} ${i.incoming.map((x) => `[ ${this.ref(x.value)}, ${this.ref(x.block)} ]`).join(', ')}`;
      case 'br':
        return `br label ${this.ref(i.dest)}`;
      case 'condbr':
        return `br ${this.typed(i.cond)}, label ${this.ref(i.ifTrue)}, label ${this.ref(i.ifFalse)}`;
      case 'ret':
        return i.value ? `ret ${this.typed(i.value)}` : 'ret void';
      case 'unreachable':
        return 'unreachable';
      case 'call': {
        const callee = i.callee.kind === 'asm'
          ? `asm ${i.callee.sideEffect ? 'sideeffect ' : ''}"${escapeLlvmString(i.callee.asm)}", "${escapeLlvmString(i.callee.constraints)}"`
          : symbol('@', i.callee.name);
        const attrs = i.attributes.map((a) => (keywordAttr.test(a) ? ` ${a}` : ` "${escapeLlvmString(a)}"`)).join('');
        return `call ${t(i.type)} ${callee}(${i.args.map((a) => this.typed(a)).join(', ')})${attrs}`;
      }
      case 'extractelement':
        return `extractelement ${this.typed(i.vector)}, ${this.typed(i.index)}`;
      case 'insertelement':
        return `insertelement ${this.typed(i.vector)}, ${this.typed(i.element)}, ${this.typed(i.index)}`;
      case 'shufflevector':
        return `shufflevector ${this.typed(i.a)}, ${this.typed(i.b)}, <${i.mask.length} x i32> <${i.mask.map((m) => (m < 0 ? 'i32 poison' : `i32 ${m}`)).join(', ')}>`;
      case 'extractvalue':
        return `extractvalue ${this.typed(i.aggregate)}, ${i.indices.join(', ')}`;
      case 'insertvalue':
        return `insertvalue ${this.typed(i.aggregate)}, ${this.typed(i.element)}, ${i.indices.join(', ')}`;
      case 'fence':
        return `fence ${scope(i.syncscope)}${i.ordering}`;
      case 'atomicrmw':
        return `atomicrmw ${i.operation} ${this.typed(i.ptr)}, ${this.typed(i.value)} ${scope(i.syncscope)}${i.ordering}, align ${i.align}`;
      default: {
        // binary ops
        const flags = i.flags.length ? `${i.flags.join(' ')} ` : '';
        return `${i.op} ${flags}${this.typed(i.lhs)}, ${this.ref(i.rhs)}`;
      }
    }
  }
}

/** Prints a module as LLVM assembly text. Same construction → same bytes. */
export function printModule(module: Module): string {
  return new ModulePrinter(module).print();
}
