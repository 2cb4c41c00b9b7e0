import { defineConfig } from 'tsup';
import { packageConfig } from '../../tools/tsup-preset.mjs';

// shims: the CJS build needs import.meta.url to find build/Release/*.node.
export default defineConfig(packageConfig(import.meta.dirname, { shims: true }));
