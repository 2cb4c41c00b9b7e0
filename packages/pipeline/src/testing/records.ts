// Test helper: tuning records for made-up problems of a made-up family.
import { recordKey, RECORD_SCHEMA_VERSION, type TuningRecord } from '../cache/records.js';

/** A valid record for problem number `n` with the given time (and optional choice name). */
export function testRecord(n: number, timeMs: number, kernelName = `k${n}`, arch = 'sm_90'): TuningRecord {
  const problem = { n, size: 64 + n };
  return {
    schema: RECORD_SCHEMA_VERSION,
    key: recordKey('test_family', arch, problem),
    family: 'test_family',
    arch,
    problem,
    choice: { kernelName, spec: { tile: n % 4 }, launch: {}, code: null },
    timeMs,
    runnersUp: [{ kernelName: `${kernelName}_b`, launch: {}, timeMs: timeMs * 1.5 }],
    verified: { mode: 'full' },
    device: { name: 'test device', driver: '13000' },
    toolchain: 'test toolchain',
    date: '2026-12-03T00:00:00.000Z',
  };
}
