#!/usr/bin/env node
// The README's test command: lint, typecheck, build and test every package through Nx, then the
// packages as npm would publish them (tools/package-test.mjs: publint, attw, an install from the
// tarballs without a C++ compiler), and print one plain `N passed, N failed` line from the vitest
// JSON reports and the package test's report. Arguments go to Nx and skip the package test.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const packages = readdirSync(join(root, 'packages')).filter((p) => existsSync(join(root, 'packages', p, 'package.json'))).sort();
const reportOf = (p) => join(root, 'packages', p, 'test-results.json');
for (const p of packages) rmSync(reportOf(p), { force: true });

const env = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false' };
const nx = spawnSync('npx', ['nx', 'run-many', '-t', 'lint', 'typecheck', 'build', 'build:native', 'test',
  '--outputStyle=stream', '--nxBail=false', ...process.argv.slice(2)], { cwd: root, env, stdio: 'inherit' });

let passed = 0, failed = 0;
const missing = [];
for (const p of packages) {
  if (!existsSync(reportOf(p))) { missing.push(p); continue; }
  const report = JSON.parse(readFileSync(reportOf(p), 'utf8'));
  passed += report.numPassedTests;
  // A suite that fails without a failed test (it did not load, or a beforeAll hook failed and its
  // tests were skipped) counts as one failure.
  failed += report.numFailedTests + report.testResults.filter((s) => s.status === 'failed' && !s.assertionResults.some((a) => a.status === 'failed')).length;
}
if (missing.length) console.log(`no test report from: ${missing.join(', ')}`);

let packageTest = 0;
if (process.argv.length === 2) {
  const report = join(root, 'package-test-results.json');
  rmSync(report, { force: true });
  packageTest = spawnSync(process.execPath, [join(root, 'tools', 'package-test.mjs'), '--report', report], { cwd: root, env, stdio: 'inherit' }).status ?? 1;
  if (existsSync(report)) {
    const counts = JSON.parse(readFileSync(report, 'utf8'));
    passed += counts.passed;
    failed += counts.failed;
  } else missing.push('tools/package-test.mjs');
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(nx.status === 0 && packageTest === 0 && failed === 0 && missing.length === 0 ? 0 : 1);
