/** Test support: the metadata notes of an AMD code object, read with LLVM's `llvm-readelf --notes`. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findToolchain } from '@rocke/ir';

/** Numeric AMD code-object metadata fields (`vgpr_count`, `vgpr_spill_count`, `private_segment_fixed_size`, ...). */
export function amdNotes(object: Uint8Array): Record<string, number> {
  const dir = mkdtempSync(join(tmpdir(), 'conv-direct-notes-'));
  try {
    const file = join(dir, 'k.hsaco');
    writeFileSync(file, object);
    const readelf = findToolchain().llc.replace(/llc(-\d+)?$/, 'llvm-readelf$1');
    const text = execFileSync(readelf, ['--notes', file], { encoding: 'utf8' });
    const out: Record<string, number> = {};
    for (const m of text.matchAll(/^\s*\.(\w+):\s+(\d+)\s*$/gm)) out[m[1]!] = Number(m[2]);
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
