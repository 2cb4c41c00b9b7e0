import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_PROBLEMS } from '@rocke/conv-direct';
import { describe, expect, it } from 'vitest';
import { readSuite } from './problem-input.js';

const publicSuite = readSuite(readFileSync(join(import.meta.dirname, '..', '..', 'device', 'public.json'), 'utf8'));

describe('built-in problem set', () => {
  it('is one small-map, one grouped and one dense shape of the public suite, same names and problems', () => {
    expect(DEFAULT_PROBLEMS.map((p) => [p.name, p.cls])).toEqual([
      ['sm_14x14_1024', 'small-map'],
      ['g_28_c512_g32', 'grouped'],
      ['d_14_c256', 'dense'],
    ]);
    for (const p of DEFAULT_PROBLEMS) expect(publicSuite.find((s) => s.name === p.name)).toEqual(p);
  });
});
