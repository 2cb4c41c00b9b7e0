#!/usr/bin/env node
// The published exports of a package: in the workspace each export has an `@rocke/source` condition
// pointing at ./src (tsc, vitest and tsup's dts resolve sibling packages from their sources through
// it), but src/ is not in the tarball, so a published package.json must not name it.
//   node ../../tools/pack-exports.mjs strip     (prepack: keeps package.json as .package.json.dev and
//                                                writes it without the condition)
//   node ../../tools/pack-exports.mjs restore   (postpack: puts .package.json.dev back)
// Run from a package directory (npm runs pack scripts there). Writes are atomic and refuse links.
import { existsSync, lstatSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

const SOURCE_CONDITION = '@rocke/source';
const file = 'package.json';
const saved = '.package.json.dev';

/** The exports map without the source condition, at any depth. */
export function withoutSourceCondition(value) {
  if (Array.isArray(value)) return value.map(withoutSourceCondition);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => key !== SOURCE_CONDITION).map(([key, v]) => [key, withoutSourceCondition(v)]));
}

function plainFile(path) {
  if (existsSync(path) && !lstatSync(path).isFile()) throw new Error(`pack-exports: ${path} is not a plain file; refusing to write through it`);
}

function writeAtomic(path, text) {
  plainFile(path);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { flag: 'wx' });
  renameSync(tmp, path);
}

function main(mode) {
  plainFile(file);
  plainFile(saved);
  if (mode === 'strip') {
    if (existsSync(saved)) throw new Error(`pack-exports: ${saved} exists (a pack stopped before postpack); run 'restore' first`);
    const text = readFileSync(file, 'utf8');
    const pkg = JSON.parse(text);
    writeAtomic(saved, text);
    writeAtomic(file, `${JSON.stringify({ ...pkg, exports: withoutSourceCondition(pkg.exports) }, null, 2)}\n`);
  } else if (mode === 'restore') {
    if (existsSync(saved)) renameSync(saved, file);
  } else {
    throw new Error("pack-exports: usage: pack-exports.mjs strip|restore");
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    main(process.argv[2]);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(2);
  }
}
