import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '../../tools/vitest-preset.mjs';

// The preset's resolve.conditions does not reach vitest's server-side resolver, which then picks a
// sibling's stale dist/; name the source condition for SSR too so siblings resolve to their src.
const base = packageTestConfig(import.meta.dirname);
export default defineConfig({ ...base, ssr: { resolve: { conditions: ['@rocke/source'] } } });
