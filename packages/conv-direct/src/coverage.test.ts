import { describe, expect, it } from 'vitest';
import { problemCandidates } from './candidates.js';
import { problemCoverage, rejectionRule } from './coverage.js';
import { problem3x3 } from './test-fixtures.js';
import { TARGET_NAMES } from './targets.js';

describe('rejectionRule', () => {
  it('replaces standalone numbers and keeps names that contain digits', () => {
    expect(rejectionRule('C 40 is not a multiple of ck 16')).toBe('C # is not a multiple of ck #');
    expect(rejectionRule('LDS 216304 bytes exceed the 163840-byte limit of gfx950')).toBe('LDS # bytes exceed the #-byte limit of gfx950');
    expect(rejectionRule("ck 16 is not a multiple of the atom's K 32 (16x16x32)")).toBe("ck # is not a multiple of the atom's K # (16x16x32)");
  });
});

describe('problemCoverage', () => {
  it('counts the valid candidates and has no reason when some exist', () => {
    const p = problem3x3({ N: 1, H: 56, W: 56, C: 64, K: 64 });
    for (const t of TARGET_NAMES) {
      const c = problemCoverage(p, t);
      expect(c.valid).toBe(problemCandidates(p, t).valid.length);
      expect(c.valid).toBeGreaterThan(0);
      expect(c.reason).toBeNull();
    }
  });

  it('names the rule that rejects the most candidates when none is valid', () => {
    // A 101x101 filter: no tile stages even its halo (two stages of at least 108x108 pixels) within
    // any target's shared memory, weights streamed per tap or not.
    const p = { ...problem3x3({ N: 1, H: 56, W: 56, C: 64, K: 64 }), R: 101, S: 101, padH: 50, padW: 50 };
    for (const t of TARGET_NAMES) {
      const c = problemCoverage(p, t);
      expect(c.valid).toBe(0);
      const counts = c.rules.map((r) => r.count);
      expect(counts).toEqual([...counts].sort((a, b) => b - a));
      expect(counts.reduce((a, b) => a + b, 0)).toBe(c.rejected);
      expect(c.rules[0]!.rule).toMatch(/^LDS # bytes exceed the #-byte limit of /);
      expect(c.reason).toBe(`no valid dense candidate on ${t}: ${c.rules[0]!.example} (this rule rejects ${c.rules[0]!.count} of ${c.raw} candidates)`);
    }
  });
});
