#!/usr/bin/env node
// The README's test command: lint, typecheck, build and test every package through Nx, then
// print one plain `N passed, N failed` line from the vitest JSON reports.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const packages = readdirSync(join(root, 'packages')).filter((p) => existsSync(join(root, 'packages', p, 'package.json'))).sort();
const reportOf = (p) => join(root, 'packages', p, 'test-results.json');
for (const p of packages) rmSync(reportOf(p), { force: true });

const env = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false' };
const nx = spawnSync('npx', ['nx', 'run-many', '-t', 'lint', 'typecheck', 'build', 'test',
  '--outputStyle=stream', '--nxBail=false', ...process.argv.slice(2)], { cwd: root, env, stdio: 'inherit' });

let passed = 0, failed = 0;
const missing = [];
for (const p of packages) {
  if (!existsSync(reportOf(p))) { missing.push(p); continue; }
  const report = JSON.parse(readFileSync(reportOf(p), 'utf8'));
  passed += report.numPassedTests;
  // A suite that fails to load counts as a failure even though it holds no test results.
  failed += report.numFailedTests + report.testResults.filter((s) => s.status === 'failed' && s.assertionResults.length === 0).length;
}
if (missing.length) console.log(`no test report from: ${missing.join(', ')}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(nx.status === 0 && failed === 0 && missing.length === 0 ? 0 : 1);
