/**
 * Golden digests of emitted IR: SHA-256 of the text per case per flavor, stored as JSON beside a
 * family's tests. `checkGoldens` fails on added, removed or changed cases with a readable list;
 * update mode (ROCKE_UPDATE_GOLDENS=1, or `update: true`) rewrites the file instead.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Flavor } from './targets/target.js';

/** One emitted text to pin. `name` must be unique per flavor. */
export interface GoldenCase {
  readonly name: string;
  readonly flavor: Flavor;
  readonly text: string;
}

/** On-disk form: `{ "version": 1, "digests": { "<flavor>": { "<case>": "<sha256 hex>" } } }`, keys sorted. */
export interface GoldenFile {
  readonly version: 1;
  readonly digests: Record<string, Record<string, string>>;
}

export interface GoldenChange {
  readonly key: string;
  readonly stored: string;
  readonly actual: string;
}

export interface GoldenReport {
  /** `flavor/case` produced now but with no stored digest. */
  readonly added: string[];
  /** `flavor/case` stored but no longer produced. */
  readonly removed: string[];
  readonly changed: GoldenChange[];
  /** Number of cases whose digest matched. */
  readonly matched: number;
  /** True when the file was (re)written in update mode. */
  readonly updated: boolean;
}

/** Thrown by checkGoldens on any difference when not updating; `report` holds the details. */
export class GoldenMismatchError extends Error {
  override readonly name = 'GoldenMismatchError';
  constructor(readonly file: string, readonly report: GoldenReport) {
    super(`${describeGoldenReport(report)}\nin ${file}; if the change is intended run with ROCKE_UPDATE_GOLDENS=1 (npm run goldens:update)`);
  }
}

/** SHA-256 hex digest of UTF-8 text. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** True when the environment asks for golden updates (ROCKE_UPDATE_GOLDENS=1). */
export function goldenUpdateRequested(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  return env.ROCKE_UPDATE_GOLDENS === '1';
}

/** One line per difference: `+ added`, `- removed`, `~ changed stored -> actual`. */
export function describeGoldenReport(r: GoldenReport): string {
  const lines = [
    ...r.added.map((k) => `+ ${k}: new case, no stored digest`),
    ...r.removed.map((k) => `- ${k}: stored digest, case no longer produced`),
    ...r.changed.map((c) => `~ ${c.key}: ${c.stored.slice(0, 12)} -> ${c.actual.slice(0, 12)}`),
  ];
  return lines.length ? `golden digests differ (${lines.length}):\n${lines.join('\n')}` : `golden digests match (${r.matched})`;
}

function readGoldenFile(file: string): GoldenFile {
  if (!existsSync(file)) return { version: 1, digests: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`golden file ${file} is not valid JSON: ${(e as Error).message}`);
  }
  const p = parsed as Partial<GoldenFile>;
  if (p.version !== 1 || typeof p.digests !== 'object' || p.digests === null) throw new Error(`golden file ${file} is not a version-1 golden file`);
  return p as GoldenFile;
}

/** Canonical JSON: sorted keys, two-space indent, trailing newline. */
export function formatGoldenFile(digests: Map<string, Map<string, string>>): string {
  const out: Record<string, Record<string, string>> = {};
  for (const flavor of [...digests.keys()].sort()) {
    const cases = digests.get(flavor)!;
    const sorted: Record<string, string> = {};
    for (const name of [...cases.keys()].sort()) sorted[name] = cases.get(name)!;
    out[flavor] = sorted;
  }
  return `${JSON.stringify({ version: 1, digests: out }, null, 2)}\n`;
}

/**
 * Compares the cases' digests with `file`. In update mode writes the file (only when something
 * differs) and returns the report; otherwise throws GoldenMismatchError on any difference.
 */
export function checkGoldens(cases: readonly GoldenCase[], file: string, options: { update?: boolean } = {}): GoldenReport {
  const update = options.update ?? goldenUpdateRequested();
  const actual = new Map<string, Map<string, string>>();
  for (const c of cases) {
    if (!c.name) throw new Error('golden case names must be non-empty');
    let m = actual.get(c.flavor);
    if (!m) actual.set(c.flavor, (m = new Map()));
    if (m.has(c.name)) throw new Error(`duplicate golden case ${c.flavor}/${c.name}`);
    m.set(c.name, sha256Hex(c.text));
  }
  const stored = readGoldenFile(file).digests;
  const added: string[] = [];
  const removed: string[] = [];
  const changed: GoldenChange[] = [];
  let matched = 0;
  for (const [flavor, m] of actual) {
    for (const [name, digest] of m) {
      const s = stored[flavor]?.[name];
      if (s === undefined) added.push(`${flavor}/${name}`);
      else if (s !== digest) changed.push({ key: `${flavor}/${name}`, stored: s, actual: digest });
      else matched++;
    }
  }
  for (const flavor of Object.keys(stored)) {
    for (const name of Object.keys(stored[flavor]!)) if (!actual.get(flavor)?.has(name)) removed.push(`${flavor}/${name}`);
  }
  added.sort();
  removed.sort();
  changed.sort((a, b) => (a.key < b.key ? -1 : 1));
  const differs = added.length + removed.length + changed.length > 0;
  if (differs && update) writeFileSync(file, formatGoldenFile(actual));
  const report: GoldenReport = { added, removed, changed, matched, updated: differs && update };
  if (differs && !update) throw new GoldenMismatchError(file, report);
  return report;
}

/**
 * Reviewable snapshots beside the digests: the full text of a few cases, one `<dir>/<flavor>/<name>.ll`
 * file each, so a re-bless shows the IR change as a diff. Compares each case's text with its file;
 * in update mode (ROCKE_UPDATE_GOLDENS=1) writes the files that differ or are missing and returns
 * their paths, otherwise throws naming the first differing line.
 */
export function checkGoldenSnapshots(cases: readonly GoldenCase[], dir: string, options: { update?: boolean } = {}): string[] {
  const update = options.update ?? goldenUpdateRequested();
  const written: string[] = [];
  const problems: string[] = [];
  for (const c of cases) {
    const file = join(dir, c.flavor, `${c.name}.ll`);
    const stored = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    if (stored === c.text) continue;
    if (update) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, c.text);
      written.push(file);
      continue;
    }
    if (stored === undefined) {
      problems.push(`+ ${c.flavor}/${c.name}: no snapshot at ${file}`);
      continue;
    }
    const want = stored.split('\n');
    const got = c.text.split('\n');
    const line = want.findIndex((l, i) => l !== got[i]);
    const at = line === -1 ? want.length : line;
    problems.push(`~ ${c.flavor}/${c.name}: line ${at + 1} differs\n    snapshot: ${want[at] ?? '(end of file)'}\n    emitted:  ${got[at] ?? '(end of text)'}`);
  }
  if (problems.length) throw new Error(`golden snapshots differ (${problems.length}):\n${problems.join('\n')}\nin ${dir}; if the change is intended run with ROCKE_UPDATE_GOLDENS=1`);
  return written;
}
