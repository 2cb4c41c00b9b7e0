import { z } from 'zod';
import type { AmdKernelFacts, KernelFacts, NvidiaKernelFacts } from './facts.js';

const count = z.number().int().nonnegative();
const digest = z.string().regex(/^[0-9a-f]{64}$/, 'not a lower-case SHA-256 hex digest');

const amdOccupancy = z.object({ unit: z.literal('waves/simd'), value: count, limitedBy: z.enum(['vgpr', 'sgpr', 'lds', 'waves']) }).strict();
const nvOccupancy = z.object({ unit: z.literal('blocks/sm'), value: count, limitedBy: z.enum(['registers', 'shared', 'warps', 'blocks']) }).strict();

/** Strict schema of {@link AmdKernelFacts}. */
export const AmdKernelFactsSchema = z
  .object({
    vendor: z.literal('amd'),
    target: z.string().min(1),
    name: z.string().min(1),
    textDigest: digest,
    codeBytes: count,
    spills: z.object({ sgpr: count, vgpr: count, any: z.boolean() }).strict(),
    scratchBytes: count,
    registers: z
      .object({ vgpr: count, agpr: count, sgpr: count, unifiedVgpr: count, allocatedVgprs: count, allocatedSgprs: count, accumOffset: count })
      .strict(),
    ldsBytes: count,
    maxWorkgroupSize: count,
    occupancy: amdOccupancy.nullable(),
  })
  .strict();

/** Strict schema of {@link NvidiaKernelFacts}. */
export const NvidiaKernelFactsSchema = z
  .object({
    vendor: z.literal('nvidia'),
    target: z.string().min(1),
    name: z.string().min(1),
    textDigest: digest,
    codeBytes: count,
    spills: z.object({ instructions: count, any: z.boolean() }).strict(),
    scratchBytes: count,
    registers: z.object({ regs: count }).strict(),
    ldsBytes: count,
    maxThreadsPerBlock: count.nullable(),
    occupancy: nvOccupancy.nullable(),
  })
  .strict();

/**
 * Strict schema of what {@link kernelFacts} returns: facts stored beside a compiled kernel (a cache
 * record) are read back through it, so a record written by other code is refused, not guessed at.
 */
export const KernelFactsSchema = z.discriminatedUnion('vendor', [AmdKernelFactsSchema, NvidiaKernelFactsSchema]);

// The schemas describe exactly the fact types: a field added to one and not the other fails here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const exact: [Same<z.infer<typeof AmdKernelFactsSchema>, AmdKernelFacts>, Same<z.infer<typeof NvidiaKernelFactsSchema>, NvidiaKernelFacts>] = [true, true];
void exact;

/** Reads stored facts: the typed facts, or a TypeError naming the first bad field. */
export function parseKernelFacts(input: unknown): KernelFacts {
  const r = KernelFactsSchema.safeParse(input);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  throw new TypeError(`not elf-prune kernel facts: ${issue && issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue?.message ?? 'invalid'}`);
}
