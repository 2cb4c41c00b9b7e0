import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isTempName, writeFileAtomic } from '../atomic-file.js';
import { CacheIntegrityError, KernelCache, defaultCacheDir, identityId, type CacheEntry, type KernelIdentity } from './cache.js';
import { gcCache, listCache, pruneCache, verifyCache } from './cache-maintenance.js';
import { canonicalJson, sha256Hex } from '../hash.js';
import { bundleForNode } from '../testing/bundle.js';

function tempCache(): KernelCache {
  return new KernelCache(mkdtempSync(join(tmpdir(), 'rocke-cache-test-'))).ensure();
}

function addEntry(cache: KernelCache, identity: KernelIdentity, ir: string, code: string, extra: Partial<CacheEntry> = {}): CacheEntry {
  const entry: CacheEntry = {
    format: 1,
    id: identityId(identity),
    identity,
    kernelName: 'k',
    ir: cache.putBlob(ir),
    code: { ...cache.putBlob(Buffer.from(code)), kind: 'hsaco' },
    toolchain: 'tc',
    emitter: '',
    facts: null,
    pruned: null,
    ...extra,
  };
  cache.putEntry(entry);
  return entry;
}

const ident = (i: number, target = 'gfx950', variant = 'dense'): KernelIdentity => ({ family: 'f', variant, target, flavor: 'llvm22', spec: { i, tile: [8, 16] } });

describe('identity', () => {
  it('is the SHA-256 of canonical JSON with sorted keys and no whitespace', () => {
    const id = ident(3);
    const text = '{"family":"f","flavor":"llvm22","spec":{"i":3,"tile":[8,16]},"target":"gfx950","variant":"dense"}';
    expect(canonicalJson(id)).toBe(text);
    expect(identityId(id)).toBe(sha256Hex(text));
    // Key order of the input does not matter; values do.
    expect(identityId({ spec: { tile: [8, 16], i: 3 }, variant: 'dense', target: 'gfx950', flavor: 'llvm22', family: 'f' })).toBe(identityId(id));
    expect(identityId(ident(4))).not.toBe(identityId(id));
    expect(identityId({ ...id, flavor: 'llvm21' })).not.toBe(identityId(id));
  });

  it('refuses values JSON cannot carry', () => {
    expect(() => canonicalJson({ a: undefined })).toThrow(/undefined/);
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(/NaN/);
    expect(() => canonicalJson({ a: new Map() })).toThrow(/Map/);
  });
});

describe('KernelCache', () => {
  it('round-trips blobs and entries, content-addressed', () => {
    const cache = tempCache();
    const e = addEntry(cache, ident(1), 'define void @k() { ret void }', 'ELF');
    expect(cache.blobPath(e.ir.digest)).toBe(join(cache.root, 'blobs', e.ir.digest.slice(0, 2), e.ir.digest));
    expect(e.ir.digest).toBe(sha256Hex('define void @k() { ret void }'));
    expect(cache.getEntry(e.id)).toEqual(e);
    expect(cache.readText(e.ir)).toBe('define void @k() { ret void }');
    // The same bytes stored again give the same blob, not a second file.
    expect(cache.putBlob('define void @k() { ret void }')).toEqual(e.ir);
    expect(cache.listBlobDigests()).toEqual([e.ir.digest, e.code.digest].sort());
    expect(cache.getEntry(identityId(ident(2)))).toBeUndefined();
  });

  it('rejects an entry whose id does not match its identity', () => {
    const cache = tempCache();
    const e = addEntry(cache, ident(1), 'a', 'b');
    expect(() => cache.putEntry({ ...e, identity: ident(2) })).toThrow(/does not match/);
  });

  it('detects a truncated blob and a flipped byte by digest, and rebuilds on put', () => {
    const cache = tempCache();
    const e = addEntry(cache, ident(1), 'some IR text', 'code object bytes');
    const path = cache.blobPath(e.code.digest);
    truncateSync(path, 4);
    expect(() => cache.readBlob(e.code)).toThrow(CacheIntegrityError);
    expect(cache.checkBlob(e.code)).toMatchObject({ ok: false, kind: 'corrupt-blob' });
    cache.putBlob(Buffer.from('code object bytes'));
    expect(Buffer.from(cache.readBlob(e.code)).toString()).toBe('code object bytes');

    const bytes = readFileSync(path);
    bytes[3] = bytes[3]! ^ 0x01;
    writeFileSync(path, bytes);
    const err = (() => {
      try {
        cache.readBlob(e.code);
      } catch (x) {
        return x as CacheIntegrityError;
      }
      return undefined;
    })();
    expect(err?.kind).toBe('corrupt-blob');
    expect(err?.detail).toMatch(/digest/);
  });

  it('reports a corrupt entry record instead of crashing', () => {
    const cache = tempCache();
    const good = addEntry(cache, ident(1), 'a', 'b');
    const bad = addEntry(cache, ident(2), 'c', 'd');
    writeFileSync(cache.entryPath(bad.id), '{"format":1,"id":');
    const { entries, corrupt } = cache.listEntries();
    expect(entries.map((x) => x.id)).toEqual([good.id]);
    expect(corrupt).toHaveLength(1);
    expect(corrupt[0]!.kind).toBe('corrupt-entry');
    expect(() => cache.getEntry(bad.id)).toThrow(/not valid JSON/);
  });

  it('never lists temp files of in-flight writes', () => {
    const cache = tempCache();
    const e = addEntry(cache, ident(1), 'a', 'b');
    // Simulate a writer that died mid-write in both directories.
    writeFileSync(join(cache.indexDir, `.${e.id}.json.123.abc.tmp`), '{"partial":');
    writeFileSync(join(cache.blobDir, e.ir.digest.slice(0, 2), `.${e.ir.digest}.9.ff.tmp`), 'par');
    expect(cache.listIds()).toEqual([e.id]);
    expect(cache.listBlobDigests()).toEqual([e.ir.digest, e.code.digest].sort());
    expect(cache.listEntries().corrupt).toEqual([]);
  });

  it('writes atomically: the target holds old or new content, temp files are gone afterwards', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rocke-atomic-'));
    const path = join(dir, 'f.json');
    writeFileAtomic(path, 'old');
    writeFileAtomic(path, 'new content');
    expect(readFileSync(path, 'utf8')).toBe('new content');
    expect(readdirSync(dir)).toEqual(['f.json']);
    expect(isTempName('.f.json.1.ab.tmp')).toBe(true);
    expect(isTempName('f.json')).toBe(false);
    // A failed write (target is a directory) leaves no temp file behind.
    expect(() => writeFileAtomic(dir, 'x')).toThrow();
    expect(readdirSync(dir)).toEqual(['f.json']);
  });

  it('loses nothing when two processes add 200 entries each at the same time', async () => {
    const cache = tempCache();
    const script = await bundleForNode(join(import.meta.dirname, '..', 'testing', 'cache-writer.ts'));
    const runChild = (tag: string) =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, [script, cache.root, tag, '200'], { stdio: ['ignore', 'ignore', 'pipe'] });
        let err = '';
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`child ${tag} exited ${code}: ${err}`))));
      });
    await Promise.all([runChild('a'), runChild('b')]);
    const { entries, corrupt } = cache.listEntries();
    expect(corrupt).toEqual([]);
    expect(entries).toHaveLength(400);
    expect(new Set(entries.map((e) => e.identity.variant))).toEqual(new Set(['a', 'b']));
    const report = verifyCache(cache);
    expect(report.problems).toEqual([]);
    expect(report.entries).toBe(400);
    // 100 shared IR + 100 shared code blobs, plus 100 + 100 private ones per writer.
    expect(cache.listBlobDigests()).toHaveLength(600);
    expect(readdirSync(cache.indexDir).filter(isTempName)).toEqual([]);
  });
});

describe('cache maintenance', () => {
  it('ls lists sorted rows and filters', () => {
    const cache = tempCache();
    addEntry(cache, ident(1, 'sm_90'), 'a', 'b');
    addEntry(cache, ident(2, 'gfx950', 'grouped'), 'c', 'd', { pruned: { reason: 'spills', detail: 'vgpr_spill_count=4' } });
    addEntry(cache, ident(3, 'gfx950', 'dense'), 'e', 'f');
    const { rows } = listCache(cache);
    expect(rows.map((r) => [r.target, r.variant, r.pruned])).toEqual([
      ['gfx950', 'dense', null],
      ['gfx950', 'grouped', 'spills'],
      ['sm_90', 'dense', null],
    ]);
    expect(listCache(cache, { target: 'sm_90' }).rows).toHaveLength(1);
  });

  it('verify finds missing and corrupt blobs and corrupt records; repair removes the bad files', () => {
    const cache = tempCache();
    const ok = addEntry(cache, ident(1), 'ir-ok', 'code-ok');
    const corrupt = addEntry(cache, ident(2), 'ir-2', 'code-2');
    const missing = addEntry(cache, ident(3), 'ir-3', 'code-3');
    appendFileSync(cache.blobPath(corrupt.code.digest), 'x');
    cache.removeBlob(missing.ir.digest);
    const broken = addEntry(cache, ident(4), 'ir-4', 'code-4');
    writeFileSync(cache.entryPath(broken.id), 'null');
    const report = verifyCache(cache);
    expect(report.entries).toBe(3);
    expect(report.problems.map((p) => [p.kind, p.id])).toEqual(
      expect.arrayContaining([
        ['corrupt-entry', null],
        ['corrupt-blob', corrupt.id],
        ['missing-blob', missing.id],
      ]),
    );
    expect(report.problems).toHaveLength(3);
    expect(report.problems.every((p) => p.action === 'none')).toBe(true);
    const repaired = verifyCache(cache, { repair: true });
    expect(repaired.problems.find((p) => p.kind === 'corrupt-blob')?.action).toBe('removed-blob');
    expect(cache.blobStat(corrupt.code.digest)).toBeUndefined();
    expect(cache.listIds()).not.toContain(broken.id);
    expect(cache.checkBlob(ok.code).ok).toBe(true);
  });

  it('prune removes marked entries by default, broken ones or a selection when asked', () => {
    const cache = tempCache();
    const keep = addEntry(cache, ident(1), 'a', 'b');
    const marked = addEntry(cache, ident(2), 'c', 'd', { pruned: { reason: 'we3-twin', detail: 'same .text as None' } });
    const broken = addEntry(cache, ident(3), 'e', 'f');
    cache.removeBlob(broken.code.digest);
    expect(pruneCache(cache, { dryRun: true }).removed.map((r) => r.id)).toEqual([marked.id]);
    expect(cache.listIds()).toHaveLength(3);
    expect(pruneCache(cache).removed).toEqual([{ id: marked.id, why: 'pruned: we3-twin' }]);
    expect(pruneCache(cache, { broken: true }).removed).toEqual([{ id: broken.id, why: 'missing-blob' }]);
    expect(cache.listIds()).toEqual([keep.id]);
    expect(pruneCache(cache, { all: true, target: 'sm_90' }).removed).toEqual([]);
    expect(pruneCache(cache, { all: true, target: 'gfx950' }).removed).toHaveLength(1);
  });

  it('gc deletes unreferenced blobs and stale temp files past the grace period only', () => {
    const cache = tempCache();
    const e = addEntry(cache, ident(1), 'a', 'b');
    const orphan = cache.putBlob('orphan bytes');
    const fresh = cache.putBlob('just written, entry not yet recorded');
    const old = new Date(Date.now() - 2 * 3_600_000);
    utimesSync(cache.blobPath(orphan.digest), old, old);
    const staleTemp = join(cache.indexDir, '.x.json.1.aa.tmp');
    const liveTemp = join(cache.indexDir, '.y.json.2.bb.tmp');
    writeFileSync(staleTemp, '{');
    writeFileSync(liveTemp, '{');
    utimesSync(staleTemp, old, old);
    const report = gcCache(cache);
    expect(report.removedBlobs).toEqual([orphan.digest]);
    expect(report.freedBytes).toBe('orphan bytes'.length);
    expect(report.removedTemps).toEqual([staleTemp]);
    expect(cache.blobStat(fresh.digest)).toBeDefined();
    expect(cache.checkBlob(e.ir).ok && cache.checkBlob(e.code).ok).toBe(true);
    expect(readdirSync(cache.indexDir)).toContain('.y.json.2.bb.tmp');
    // With no grace, the fresh orphan goes too.
    expect(gcCache(cache, { graceMs: 0 }).removedBlobs).toEqual([fresh.digest]);
  });

  it('finds the default directory from ROCKE_CACHE_DIR or the repository root', () => {
    expect(defaultCacheDir({ ROCKE_CACHE_DIR: '/tmp/x-cache' }, '/')).toBe('/tmp/x-cache');
    expect(defaultCacheDir({}, join(import.meta.dirname, '..', '..'))).toBe(join(import.meta.dirname, '..', '..', '..', '..', '.rocke-cache'));
  });
});
