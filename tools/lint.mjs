#!/usr/bin/env node
// Workspace lint: keeps the package graph one-way and a few source rules.
//   node tools/lint.mjs [packageDir]   (default: every package)
// Rules: a package imports only the siblings `allowed` lists, declared in its package.json, and only
// through their exported entry points (never '@rocke/x/src/...' or any path outside their `exports`);
// no import cycle among a package's modules; pipeline's compile/, cache/, bench/ and api/ import no kernel package, nor
// does its cli/ except the composition root cli/wiring.ts; no focused test or debugger statement; in the packages
// of LONG_FUNCTION_PACKAGES no function over MAX_FUNCTION_LINES lines unless its body is mostly one switch.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** Which siblings each package may import (DESIGN.md §2). */
const allowed = {
  ir: [],
  reference: [],
  'elf-prune': [],
  'hip-runtime': ['ir'],
  'conv-direct': ['ir', 'split-reduce'],
  'split-reduce': ['ir'],
  pipeline: ['ir', 'conv-direct', 'split-reduce', 'elf-prune', 'hip-runtime', 'reference'],
};

/**
 * Folders that work for any kernel family: their modules (tests aside) reach a family only through
 * @rocke/ir's `Family<S>`, pipeline's `OpPlanner` / `OpRuntime` (src/planner.ts) or, in cli/, the
 * objects the composition root exports, and never import a kernel package. The composition root
 * (COMPOSITION_ROOTS) is the one module of those folders that plugs the kernel packages in.
 */
const FAMILY_AGNOSTIC = { pipeline: ['src/compile', 'src/cache', 'src/bench', 'src/api', 'src/cli'] };
const COMPOSITION_ROOTS = { pipeline: ['src/cli/wiring.ts'] };
const KERNEL_PACKAGES = ['conv-direct', 'split-reduce'];

/** Packages whose functions must stay under MAX_FUNCTION_LINES (a switch-dominated body is exempt). */
const LONG_FUNCTION_PACKAGES = ['pipeline', 'conv-direct'];
const MAX_FUNCTION_LINES = 120;

/**
 * Known violations being removed on other branches, each named exactly; a listed entry that no
 * longer occurs is itself reported, so the list cannot go stale.
 */
const ALLOWED_CYCLES = [];
const ALLOWED_LONG_FUNCTIONS = [];

const root = resolve(import.meta.dirname, '..');
const arg = process.argv[2];
const dirs = arg
  ? [resolve(arg)]
  : readdirSync(join(root, 'packages')).map((p) => join(root, 'packages', p)).filter((d) => existsSync(join(d, 'package.json')));
const problems = [];

function* sources(dir) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (/\.(ts|mts|mjs|js)$/.test(name)) yield path;
  }
}

for (const dir of dirs) {
  const name = basename(dir);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const declared = new Set(Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }));
  if (!(name in allowed)) problems.push(`${name}: not in the package map of tools/lint.mjs`);
  for (const file of sources(join(dir, 'src'))) {
    const where = relative(root, file);
    const text = readFileSync(file, 'utf8');
    for (const [, spec] of text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
      const sibling = /^@rocke\/([\w-]+)/.exec(spec)?.[1];
      if (sibling) {
        if (!(allowed[name] ?? []).includes(sibling)) problems.push(`${where}: ${name} may not depend on @rocke/${sibling}`);
        if (KERNEL_PACKAGES.includes(sibling) && familyAgnostic(name, dir, file)) problems.push(`${where}: a family-agnostic module may not import @rocke/${sibling}; take the family as a Family<S> or an OpPlanner, or (cli/) from the composition root`);
        else if (!declared.has(`@rocke/${sibling}`)) problems.push(`${where}: @rocke/${sibling} is not in package.json dependencies`);
        const sub = spec.slice(`@rocke/${sibling}`.length);
        if (sub && !exportsOf(sibling).includes(`.${sub}`)) problems.push(`${where}: reaches into ${spec}; import the package or one of its exports (${exportsOf(sibling).join(', ')})`);
      }
      if (spec.startsWith('.') && !resolve(file, '..', spec).startsWith(dir)) problems.push(`${where}: relative import leaves the package: ${spec}`);
    }
    if (/\b(describe|it|test)\.only\(/.test(text)) problems.push(`${where}: focused test (.only)`);
    if (/^\s*debugger;?\s*$/m.test(text)) problems.push(`${where}: debugger statement`);
  }
}

/** True for a module under one of its package's FAMILY_AGNOSTIC folders, tests, benchmarks and the composition root aside. */
function familyAgnostic(name, dir, file) {
  if (/\.(test|test-d|bench)\.ts$/.test(file)) return false;
  if ((COMPOSITION_ROOTS[name] ?? []).some((root) => file === join(dir, root))) return false;
  return (FAMILY_AGNOSTIC[name] ?? []).some((folder) => file.startsWith(join(dir, folder) + '/'));
}

function exportsOf(pkgName) {
  const path = join(root, 'packages', pkgName, 'package.json');
  if (!existsSync(path)) return ['.'];
  return Object.keys(JSON.parse(readFileSync(path, 'utf8')).exports ?? { '.': null });
}

/** Relative import edges of every TypeScript module under `dir` (type-only imports included). */
function importGraph(dir) {
  const graph = new Map();
  for (const file of sources(join(dir, 'src'))) {
    if (!/\.ts$/.test(file)) continue;
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
    const edges = [];
    for (const st of sf.statements) {
      const spec = (ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) && st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier) ? st.moduleSpecifier.text : null;
      if (!spec?.startsWith('.')) continue;
      const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
      if (existsSync(target)) edges.push(target);
      else if (existsSync(join(target, 'index.ts'))) edges.push(join(target, 'index.ts'));
    }
    graph.set(file, edges);
  }
  return graph;
}

/** Strongly connected components of more than one module (Tarjan), each as its sorted member list. */
function cycles(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const out = [];
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.map((f) => relative(root, f)).sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

/** Functions longer than MAX_FUNCTION_LINES whose body is not mostly one switch statement. */
function longFunctions(dir) {
  const out = [];
  for (const file of sources(join(dir, 'src'))) {
    if (!/\.ts$/.test(file) || /\.test(-d)?\.ts$/.test(file)) continue;
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const lineOf = (pos) => sf.getLineAndCharacterOfPosition(pos).line;
    const visit = (node) => {
      if (ts.isFunctionLike(node) && node.body) {
        const lines = lineOf(node.end) - lineOf(node.getStart(sf)) + 1;
        const statements = ts.isBlock(node.body) ? node.body.statements : [];
        const switchLines = Math.max(0, ...statements.filter(ts.isSwitchStatement).map((st) => lineOf(st.end) - lineOf(st.getStart(sf)) + 1));
        if (lines > MAX_FUNCTION_LINES && switchLines * 2 < lines) {
          const name = node.name?.getText(sf) ?? (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(sf) : '(anonymous)');
          out.push({ key: `${relative(root, file)} ${name}`, where: `${relative(root, file)}:${lineOf(node.getStart(sf)) + 1}`, lines });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}

const seenAllowed = new Set();
for (const dir of dirs) {
  for (const scc of cycles(importGraph(dir))) {
    const key = scc.join(' -> ');
    if (ALLOWED_CYCLES.includes(key)) seenAllowed.add(key);
    else problems.push(`import cycle: ${key}`);
  }
  if (!LONG_FUNCTION_PACKAGES.includes(basename(dir))) continue;
  for (const f of longFunctions(dir)) {
    if (ALLOWED_LONG_FUNCTIONS.includes(f.key)) seenAllowed.add(f.key);
    else problems.push(`${f.where}: function ${f.key.split(' ')[1]} is ${f.lines} lines (split it under ${MAX_FUNCTION_LINES}, or make its body one switch)`);
  }
}
if (!arg) for (const key of [...ALLOWED_CYCLES, ...ALLOWED_LONG_FUNCTIONS]) if (!seenAllowed.has(key)) problems.push(`tools/lint.mjs: allow-listed '${key}' no longer occurs; remove it from the list`);

for (const p of problems) console.error(p);
if (problems.length) process.exit(1);
