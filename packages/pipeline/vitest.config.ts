import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '../../tools/vitest-preset.mjs';

// Type tests of the public API (*.test-d.ts) run under vitest's typecheck.
export default defineConfig(packageTestConfig(import.meta.dirname, { typecheck: { enabled: true, include: ['**/*.test-d.ts'], tsconfig: './tsconfig.json' } }));
