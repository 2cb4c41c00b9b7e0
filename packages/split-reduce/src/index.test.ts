import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { VERSION } from './index.js';

describe('@rocke/split-reduce', () => {
  it('reports the version in its package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(VERSION).toBe(pkg.version);
  });
});
