/**
 * Structural validation of a module without LLVM: every block ends in exactly one terminator,
 * phis lead their block and list each predecessor once, operands belong to this function or
 * module, and every use is dominated by its definition. An interpreter can rely on a module
 * that passes; kernel authors get a message naming the value and blocks instead of llc's.
 */
import type { Block, Instruction, IrFunction, Value } from './ir.js';
import { isTerminator, operandsOf } from './ir.js';
import type { Module } from './module.js';

function label(i: Instruction): string {
  return i.name !== undefined ? `%${i.name} (${i.op})` : i.op;
}

function successors(b: Block): Block[] {
  const t = b.instructions[b.instructions.length - 1];
  if (!t) return [];
  if (t.op === 'br') return [t.dest];
  if (t.op === 'condbr') return t.ifTrue === t.ifFalse ? [t.ifTrue] : [t.ifTrue, t.ifFalse];
  return [];
}

/** Immediate dominators of reachable blocks (Cooper, Harvey, Kennedy), entry maps to itself. */
function dominators(fn: IrFunction): Map<Block, Block> {
  const entry = fn.blocks[0]!;
  const order: Block[] = [];
  const seen = new Set<Block>();
  const visit = (b: Block) => {
    seen.add(b);
    for (const s of successors(b)) if (!seen.has(s)) visit(s);
    order.push(b);
  };
  visit(entry);
  const rpo = order.reverse();
  const index = new Map(rpo.map((b, n) => [b, n]));
  const preds = new Map<Block, Block[]>(rpo.map((b) => [b, []]));
  for (const b of rpo) for (const s of successors(b)) preds.get(s)?.push(b);
  const idom = new Map<Block, Block>([[entry, entry]]);
  const intersect = (a: Block, b: Block): Block => {
    while (a !== b) {
      while (index.get(a)! > index.get(b)!) a = idom.get(a)!;
      while (index.get(b)! > index.get(a)!) b = idom.get(b)!;
    }
    return a;
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (const b of rpo.slice(1)) {
      let d: Block | undefined;
      for (const p of preds.get(b)!) if (idom.has(p)) d = d ? intersect(p, d) : p;
      if (d && idom.get(b) !== d) {
        idom.set(b, d);
        changed = true;
      }
    }
  }
  return idom;
}

function dominates(idom: Map<Block, Block>, a: Block, b: Block): boolean {
  for (let cur = b; ; cur = idom.get(cur)!) {
    if (cur === a) return true;
    if (idom.get(cur) === cur || !idom.has(cur)) return false;
  }
}

function validateFunction(m: Module, fn: IrFunction, problems: string[]): void {
  const where = `@${fn.name}`;
  const blocks = new Set(fn.blocks);
  const home = new Map<Instruction, { block: Block; index: number }>();
  for (const b of fn.blocks) {
    if (b.parent !== fn) problems.push(`${where}: block ${b.name} belongs to @${b.parent.name}`);
    b.instructions.forEach((i, index) => {
      if (home.has(i)) problems.push(`${where}: instruction ${label(i)} appears twice`);
      home.set(i, { block: b, index });
    });
  }
  const preds = new Map<Block, Block[]>(fn.blocks.map((b) => [b, []]));
  for (const b of fn.blocks) {
    const n = b.instructions.length;
    if (n === 0 || !isTerminator(b.instructions[n - 1]!)) problems.push(`${where}: block ${b.name} does not end in a terminator`);
    b.instructions.forEach((i, k) => {
      if (k < n - 1 && isTerminator(i)) problems.push(`${where}: block ${b.name} has ${i.op} before its end`);
      if (i.op === 'phi' && b.instructions.slice(0, k).some((x) => x.op !== 'phi')) problems.push(`${where}: phi ${label(i)} in ${b.name} follows a non-phi`);
    });
    for (const s of successors(b)) {
      if (!blocks.has(s)) problems.push(`${where}: block ${b.name} branches to ${s.name}, which is not in this function`);
      else preds.get(s)!.push(b);
    }
  }
  const idom = fn.blocks.length ? dominators(fn) : new Map<Block, Block>();
  const globals = new Set<Value>([...m.globals, ...m.functions]);
  for (const b of fn.blocks) {
    b.instructions.forEach((i, k) => {
      if (i.op === 'phi') {
        const ps = preds.get(b)!;
        const inc = i.incoming.map((x) => x.block);
        const missing = ps.filter((p) => !inc.includes(p));
        const extra = inc.filter((x, n) => !ps.includes(x) || inc.indexOf(x) !== n);
        if (missing.length || extra.length) {
          problems.push(`${where}: phi ${label(i)} in ${b.name} has incoming [${inc.map((x) => x.name).join(', ')}] but predecessors [${ps.map((x) => x.name).join(', ')}]`);
        }
      }
      const uses: { v: Value; at: Block; after: number }[] =
        i.op === 'phi'
          ? i.incoming.map((x) => ({ v: x.value, at: x.block, after: x.block.instructions.length }))
          : operandsOf(i).map((v) => ({ v, at: b, after: k }));
      if (i.op === 'call' && i.callee.kind === 'function' && !globals.has(i.callee)) problems.push(`${where}: ${label(i)} calls @${i.callee.name}, which is not in this module`);
      for (const { v, at, after } of uses) {
        if (v.kind === 'arg') {
          if (fn.args[v.index] !== v) problems.push(`${where}: ${label(i)} in ${b.name} uses argument %${v.name} of another function`);
        } else if (v.kind === 'global' || v.kind === 'function') {
          if (!globals.has(v)) problems.push(`${where}: ${label(i)} in ${b.name} uses @${v.name}, which is not in this module`);
        } else if (v.kind === 'inst') {
          const def = home.get(v);
          if (!def) problems.push(`${where}: ${label(i)} in ${b.name} uses ${label(v)}, which is not in this function`);
          else if (!idom.has(at)) continue; // unreachable use: no dominance requirement
          else if (def.block === at ? def.index >= after : !dominates(idom, def.block, at)) {
            problems.push(`${where}: ${label(i)} in ${b.name} uses ${label(v)} from ${def.block.name}, which does not dominate the use`);
          }
        }
      }
    });
  }
}

/** Lists structural problems of every defined function (empty when the module is valid). */
export function validateModule(m: Module): string[] {
  const problems: string[] = [];
  for (const fn of m.functions) if (fn.blocks.length) validateFunction(m, fn, problems);
  return problems;
}
