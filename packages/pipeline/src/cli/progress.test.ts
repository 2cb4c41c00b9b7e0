import { describe, expect, it } from 'vitest';
import { compileProgress } from './progress.js';
import { briefError, formatBytes, formatDuration, formatTable } from '../table.js';

const failure = { stage: 'compile' as const, family: 'f', target: 'gfx950', variant: 'v', kernelName: 'k3', id: null, message: 'llc crashed\nstack...' };

describe('compile progress', () => {
  it('prints plain lines at 10% steps and every failure when not a terminal', () => {
    let out = '';
    const p = compileProgress({ write: (t) => (out += t), isTTY: false });
    p.start!(20);
    for (let i = 0; i < 20; i++) p.done!(i === 3 ? 'failed' : i % 2 ? 'cached' : 'compiled', `k${i}`, i === 3 ? failure : undefined);
    p.finish();
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toBe('compile-all: 20 entries');
    expect(lines).toContain('FAILED gfx950 f/v k3 [compile]: llc crashed');
    const steps = lines.filter((l) => /^compile-all: \d+\/20/.test(l));
    // One line per 10% step (0%..100%), except the step the failure line already stood for.
    expect(steps.length).toBeGreaterThanOrEqual(10);
    expect(steps.at(-1)).toBe('compile-all: 20/20  compiled 10  cached 9  failed 1');
    expect(out).not.toContain('\r');
  });

  it('adds a back-fill pass to the total so the count never passes it', () => {
    let out = '';
    const p = compileProgress({ write: (t) => (out += t), isTTY: false });
    p.start!(2);
    p.done!('compiled', 'a');
    p.done!('compiled', 'b');
    p.start!(3);
    for (const k of ['a', 'b', 'c']) p.done!(k === 'c' ? 'compiled' : 'cached', k);
    const lines = out.trimEnd().split('\n');
    expect(lines).toContain('compile-all: 3 more entries (back-fill pass)');
    expect(lines.at(-1)).toBe('compile-all: 5/5  compiled 3  cached 2  failed 0');
  });

  it('redraws one bar in place on a terminal, throttled, and ends the line on finish', () => {
    let out = '';
    let t = 0;
    const p = compileProgress({ write: (s) => (out += s), isTTY: true, columns: 80 }, () => t);
    p.start!(4);
    p.done!('compiled', 'a');
    p.done!('compiled', 'b'); // same instant: throttled
    t = 500;
    p.done!('cached', 'c');
    p.done!('compiled', 'd'); // last one always drawn
    p.finish();
    const frames = out.split('\r').filter(Boolean);
    expect(frames[0]).toMatch(/^\[\.+\] 0\/4 /);
    expect(frames.some((f) => f.startsWith('[') && f.includes(' 2/4 '))).toBe(false);
    expect(frames.some((f) => f.includes(' 3/4 '))).toBe(true);
    expect(frames.at(-1)).toMatch(/^\[#+\] 4\/4 {2}compiled 3 {2}cached 1 {2}failed 0\x1b\[K\n$/);
  });
});

describe('tables and units', () => {
  it('pads columns, right-aligns numbers, and formats sizes and durations', () => {
    expect(formatTable(['name', 'n'], [['a', 1], ['bbb', 100]])).toBe('name    n\n----  ---\na       1\nbbb   100\n');
    expect([formatBytes(512), formatBytes(2048), formatBytes(3 * 1024 * 1024)]).toEqual(['512 B', '2.0 KiB', '3.0 MiB']);
    expect([formatDuration(850.4), formatDuration(12_345)]).toEqual(['850 ms', '12.3 s']);
    expect(briefError('/usr/bin/opt -O3 k.ll failed (exit 1):\n/usr/bin/opt: k.ll:3:1: error: expected type\ndefine')).toBe('/usr/bin/opt: k.ll:3:1: error: expected type');
    expect(briefError('no such kernel\nmore')).toBe('no such kernel');
  });
});
