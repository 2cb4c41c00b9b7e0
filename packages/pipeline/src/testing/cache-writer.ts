// Child-process entry for the cache concurrency test: adds `count` entries to a cache.
//   node bundle.mjs <cacheDir> <tag> <count>
import { KernelCache, identityId, type CacheEntry } from '../cache/cache.js';

const [dir, tag, countText] = process.argv.slice(2);
if (!dir || !tag || !countText) {
  process.stderr.write('usage: cache-writer <cacheDir> <tag> <count>\n');
  process.exit(2);
}
const cache = new KernelCache(dir).ensure();
for (let i = 0; i < Number(countText); i++) {
  const identity = { family: 'test', variant: tag, target: 'gfx950', flavor: 'llvm22', spec: { i } };
  // Half the IR text is shared between the two writers, so they race on the same blobs too.
  const ir = cache.putBlob(`; kernel ${i % 2 === 0 ? 'shared' : tag} ${i}\n`);
  const code = cache.putBlob(new Uint8Array(Buffer.from(`code ${i % 2 === 0 ? 'shared' : tag} ${i}`)));
  const entry: CacheEntry = {
    format: 1,
    id: identityId(identity),
    identity,
    kernelName: `k_${tag}_${i}`,
    ir,
    code: { ...code, kind: 'hsaco' },
    toolchain: 'test',
    emitter: '',
    facts: null,
    pruned: null,
  };
  cache.putEntry(entry);
}
