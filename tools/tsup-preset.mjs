// Shared tsup settings: every package ships ESM + CJS + .d.ts from src/index.ts. No source maps:
// the output is not minified (stack traces read as is), and maps would point at src/, which is
// not published.
import { readFileSync } from 'node:fs';

/** @param {string} packageDir @param {Partial<import('tsup').Options>} [extra] */
export function packageConfig(packageDir, extra = {}) {
  const pkg = JSON.parse(readFileSync(`${packageDir}/package.json`, 'utf8'));
  return {
    entry: ['src/index.ts'],
    format: ['esm', 'cjs'],
    dts: { compilerOptions: { customConditions: [] } },
    sourcemap: false,
    clean: true,
    target: 'node20',
    platform: 'node',
    tsconfig: 'tsconfig.json',
    define: { __PACKAGE_VERSION__: JSON.stringify(pkg.version) },
    ...extra,
  };
}
