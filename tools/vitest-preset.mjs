// Shared vitest settings: tests import sibling packages from their src (the @rocke/source
// condition) and write a JSON report that tools/test.mjs turns into the CI count line.
import { readFileSync } from 'node:fs';

/** @param {string} packageDir @param {Record<string, unknown>} [test] */
export function packageTestConfig(packageDir, test = {}) {
  const pkg = JSON.parse(readFileSync(`${packageDir}/package.json`, 'utf8'));
  return {
    // vitest 4 runs tests through the SSR resolver: name the source condition there too, or
    // siblings load from a stale dist/.
    resolve: { conditions: ['@rocke/source'] },
    ssr: { resolve: { conditions: ['@rocke/source'], externalConditions: ['@rocke/source'] } },
    define: { __PACKAGE_VERSION__: JSON.stringify(pkg.version) },
    test: {
      name: pkg.name,
      dir: './src',
      watch: false,
      restoreMocks: true,
      testTimeout: 60_000,
      // beforeAll hooks compile fixtures with LLVM; on a loaded 2-core machine that outlasts the 10 s default.
      hookTimeout: 60_000,
      reporters: ['default', ['json', { outputFile: 'test-results.json' }]],
      ...test,
    },
  };
}
