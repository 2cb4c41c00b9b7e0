import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KernelCache } from './cache.js';
import { canonicalJson } from '../hash.js';
import { inShard, parseShard } from '../compile/shard.js';
import { bundleForNode } from '../testing/bundle.js';
import { testRecord } from '../testing/records.js';
import { mergeCaches } from './merge.js';
import { betterRecord, RecordStore, RecordIntegrityError } from './records.js';

const tempDir = () => mkdtempSync(join(tmpdir(), 'rocke-records-'));

describe('RecordStore', () => {
  it('keeps one record per key: the faster one, whichever order they come in', () => {
    const a = new RecordStore(tempDir());
    const b = new RecordStore(tempDir());
    const slow = testRecord(1, 2, 'slow');
    const fast = testRecord(1, 1, 'fast');
    expect(a.put(slow).replaced).toBe(true);
    expect(a.put(fast).replaced).toBe(true);
    b.put(fast);
    expect(b.put(slow)).toEqual({ kept: fast, replaced: false });
    expect(a.get(fast.key)).toEqual(fast);
    expect(b.get(fast.key)).toEqual(fast);
    expect(a.list().records).toHaveLength(1);
  });

  it('breaks equal times by canonical JSON, so the winner does not depend on order', () => {
    const x = testRecord(1, 1, 'x');
    const y = testRecord(1, 1, 'y');
    expect(betterRecord(x, y)).toBe(betterRecord(y, x));
    expect(betterRecord(x, y).choice.kernelName).toBe('x');
  });

  it('reports a corrupt record, a record filed under another key and a record of another schema version', () => {
    const store = new RecordStore(tempDir());
    const good = testRecord(1, 1);
    store.put(good);
    const other = testRecord(2, 1);
    mkdirSync(store.dir, { recursive: true });
    writeFileSync(store.path(other.key), '{"schema":1,"key":');
    const third = testRecord(3, 1);
    writeFileSync(store.path(third.key), JSON.stringify(testRecord(4, 1)));
    const fifth = testRecord(5, 1);
    writeFileSync(store.path(fifth.key), JSON.stringify({ ...fifth, schema: 2 }));
    const sixth = testRecord(6, 1);
    writeFileSync(store.path(sixth.key), JSON.stringify({ ...sixth, timeMs: -1 }));
    const { records, corrupt } = store.list();
    expect(records).toEqual([good]);
    const details = corrupt.map((c) => c.detail).join('\n');
    expect(corrupt).toHaveLength(4);
    expect(details).toMatch(/not JSON/);
    expect(details).toMatch(/filed as .* but holds/);
    expect(details).toMatch(/schema version 2, this build reads version 1/);
    expect(details).toMatch(/timeMs/);
    expect(() => store.get(other.key)).toThrow(RecordIntegrityError);
    // A corrupt record does not block a new one for its key.
    expect(store.put(testRecord(2, 5)).replaced).toBe(true);
    expect(store.get(other.key)?.timeMs).toBe(5);
  });

  it('refuses a record whose key does not match its content', () => {
    const store = new RecordStore(tempDir());
    expect(() => store.put({ ...testRecord(1, 1), key: testRecord(2, 1).key })).toThrow(/hash to/);
  });

  it('refuses to write through a symlink planted at a record path (the target stays as it was)', () => {
    const root = tempDir();
    const store = new RecordStore(root);
    const r = testRecord(1, 1);
    mkdirSync(store.dir, { recursive: true });
    const victim = join(root, 'victim.txt');
    writeFileSync(victim, 'keep');
    symlinkSync(victim, store.path(r.key));
    expect(() => store.get(r.key)).toThrow(RecordIntegrityError);
    expect(() => store.put(r)).toThrow(/symbolic link, not a regular file; refusing to replace it/);
    expect(readdirSync(root).includes('victim.txt')).toBe(true);
    expect(readFileSync(victim, 'utf8')).toBe('keep');
  });

  it('two processes tuning at once lose nothing: every key ends with its fastest record, no lock left', async () => {
    const root = tempDir();
    const script = await bundleForNode(join(import.meta.dirname, '..', 'testing', 'record-writer.ts'));
    const count = 60;
    const run = (mode: string, offset: number) =>
      new Promise<number>((done, fail) => {
        const child = spawn(process.execPath, [script, root, mode, String(count), String(offset)], { stdio: ['ignore', 'ignore', 'pipe'] });
        let err = '';
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('error', fail);
        child.on('close', (code) => (code === 0 ? done(code) : fail(new Error(`writer exit ${code}: ${err}`))));
      });
    // Same keys 0..59 from both (opposite time orders), plus 60..119 from the second only.
    await Promise.all([run('up', 0), run('down', 0), run('down', count)]);
    const store = new RecordStore(root);
    const { records, corrupt } = store.list();
    expect(corrupt).toEqual([]);
    expect(records).toHaveLength(2 * count);
    for (let i = 0; i < count; i++) {
      const r = store.get(testRecord(i, 1).key)!;
      expect(r.timeMs).toBe(Math.min(i + 1, count - i));
    }
    expect(readdirSync(store.dir).filter((n) => !n.endsWith('.json'))).toEqual([]);
  }, 60_000);
});

describe('shards and merge', () => {
  it('parses i/n, auto/n from a Kubernetes or Slurm index, and refuses the rest', () => {
    expect(parseShard('2/3')).toEqual({ index: 2, count: 3 });
    expect(parseShard('auto/4', { JOB_COMPLETION_INDEX: '3' })).toEqual({ index: 3, count: 4 });
    expect(parseShard('auto/4', { SLURM_ARRAY_TASK_ID: '4', SLURM_ARRAY_TASK_MIN: '1' })).toEqual({ index: 3, count: 4 });
    expect(parseShard('auto', { SLURM_ARRAY_TASK_ID: '0', SLURM_ARRAY_TASK_COUNT: '2' })).toEqual({ index: 0, count: 2 });
    expect(() => parseShard('3/3')).toThrow(/not below/);
    expect(() => parseShard('auto/2', {})).toThrow(/JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID/);
    expect(() => parseShard('auto', { JOB_COMPLETION_INDEX: '0' })).toThrow(/shard count/);
    expect(() => parseShard('1-3')).toThrow(/i\/n/);
  });

  it('splits a list into disjoint shards that cover it, sizes within one', () => {
    const items = Array.from({ length: 31 }, (_, i) => `job${(i * 7) % 31}`);
    const shards = [0, 1, 2].map((index) => inShard(items, (s) => s, { index, count: 3 }));
    expect(shards.flat().sort()).toEqual([...items].sort());
    expect(new Set(shards.flat()).size).toBe(items.length);
    expect(Math.max(...shards.map((s) => s.length)) - Math.min(...shards.map((s) => s.length))).toBeLessThanOrEqual(1);
    // Order of the input does not change the assignment.
    expect(inShard([...items].reverse(), (s) => s, { index: 1, count: 3 }).sort()).toEqual([...shards[1]!].sort());
  });

  it('three shards of records merged equal one unsharded run, in any merge order', () => {
    const problems = Array.from({ length: 20 }, (_, i) => i);
    // "Tuning" problem i on shard s: the time depends only on the problem, as on one machine.
    const tune = (root: string, shard?: { index: number; count: number }) => {
      const store = new RecordStore(root);
      const cache = new KernelCache(root).ensure();
      for (const i of inShard(problems, (p) => String(p).padStart(4, '0'), shard)) {
        store.put(testRecord(i, 1 + (i % 5)));
        cache.putBlob(`code of ${i}`);
      }
    };
    const whole = tempDir();
    tune(whole);
    const shards = [0, 1, 2].map((index) => {
      const dir = tempDir();
      tune(dir, { index, count: 3 });
      return dir;
    });
    const snapshot = (root: string) => ({
      records: new RecordStore(root).list().records.map((r) => canonicalJson(r)),
      blobs: new KernelCache(root).listBlobDigests(),
    });
    const m1 = tempDir();
    const report = mergeCaches(m1, shards);
    expect(report.problems).toEqual([]);
    expect(report.records.added).toBe(20);
    const m2 = tempDir();
    mergeCaches(m2, [...shards].reverse());
    // Blobs are only copied for entries; compare records here and blobs through entries below.
    expect(snapshot(m1).records).toEqual(snapshot(whole).records);
    expect(snapshot(m2).records).toEqual(snapshot(whole).records);
  });

  it('merge keeps the faster of two verified records for one key and reports corrupt ones', () => {
    const a = tempDir();
    const b = tempDir();
    new RecordStore(a).put(testRecord(1, 3, 'a'));
    new RecordStore(b).put(testRecord(1, 2, 'b'));
    const bad = testRecord(2, 1);
    mkdirSync(join(b, 'records'), { recursive: true });
    writeFileSync(new RecordStore(b).path(bad.key), 'garbage');
    const into = tempDir();
    const report = mergeCaches(into, [a, b, join(into, 'missing')]);
    expect(new RecordStore(into).get(testRecord(1, 1).key)?.choice.kernelName).toBe('b');
    expect(report.records).toEqual({ added: 1, replaced: 1, unchanged: 0 });
    expect(report.problems.map((p) => p.detail)).toEqual([expect.stringMatching(/not JSON/), 'no such directory']);
  });
});
