import { defineConfig } from 'tsup';
import { packageConfig } from '../../tools/tsup-preset.mjs';

// shims: the CJS build needs import.meta.url to find build/Release/*.node.
// Two entries: the API (src/index.ts) and the test doubles (src/testing.ts, the ./testing export).
export default defineConfig(packageConfig(import.meta.dirname, { shims: true, entry: ['src/index.ts', 'src/testing.ts'] }));
