import { defineConfig } from 'tsup';
import { packageConfig } from '../../tools/tsup-preset.mjs';

// Two entries: the library (src/index.ts) and the `rocke` executable (src/cli.ts, whose
// `#!/usr/bin/env node` first line esbuild keeps at the top of dist/cli.js). Only the library has
// types; the CJS copy of the executable is built but not published (package.json `files`).
export default defineConfig(
  packageConfig(import.meta.dirname, {
    entry: ['src/index.ts', 'src/cli.ts'],
    dts: { entry: 'src/index.ts', compilerOptions: { customConditions: [] } },
  }),
);
