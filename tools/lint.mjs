#!/usr/bin/env node
// Workspace lint: keeps the package graph of DESIGN.md §2 and a few source rules.
//   node tools/lint.mjs [packageDir]   (default: every package)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';

/** Which siblings each package may import (DESIGN.md §2). */
const allowed = {
  ir: [],
  reference: [],
  'elf-prune': [],
  'hip-runtime': [],
  'conv-direct': ['ir'],
  'split-reduce': ['ir'],
  pipeline: ['ir', 'conv-direct', 'split-reduce', 'elf-prune', 'hip-runtime', 'reference'],
};

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
        else if (!declared.has(`@rocke/${sibling}`)) problems.push(`${where}: @rocke/${sibling} is not in package.json dependencies`);
        if (spec.includes('/src')) problems.push(`${where}: reaches into ${spec}; import the package`);
      }
      if (spec.startsWith('.') && !resolve(file, '..', spec).startsWith(dir)) problems.push(`${where}: relative import leaves the package: ${spec}`);
    }
    if (/\b(describe|it|test)\.only\(/.test(text)) problems.push(`${where}: focused test (.only)`);
    if (/^\s*debugger;?\s*$/m.test(text)) problems.push(`${where}: debugger statement`);
  }
}

for (const p of problems) console.error(p);
if (problems.length) process.exit(1);
