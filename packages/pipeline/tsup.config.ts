import { defineConfig } from 'tsup';
import { packageConfig } from '../../tools/tsup-preset.mjs';

// Three entries: the library (src/index.ts), its test helpers (src/testing/index.ts, the ./testing
// export) and the `rocke` executable (src/cli.ts, whose `#!/usr/bin/env node` first line esbuild
// keeps at the top of dist/cli.js). Only the library and its test helpers have types; the CJS copy
// of the executable is built but not published (package.json `files`).
export default defineConfig(
  packageConfig(import.meta.dirname, {
    entry: { index: 'src/index.ts', 'testing/index': 'src/testing/index.ts', cli: 'src/cli.ts' },
    dts: { entry: { index: 'src/index.ts', 'testing/index': 'src/testing/index.ts' }, compilerOptions: { customConditions: [] } },
  }),
);
