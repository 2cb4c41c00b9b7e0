import { checkGoldens, compile, disassemble, findToolchain, getTarget, goldenUpdateRequested, type GoldenCase, type Instruction } from '@rocke/ir';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SplitReduceError, TARGET_NAMES, buildSplitReduce, defaultSpec, emitSplitReduce, helperSpecs, kernelName, type SplitReduceSpec } from './index.js';

const GOLDEN_FILE = join(import.meta.dirname, 'split-reduce.goldens.json');
const allHelperSpecs = TARGET_NAMES.flatMap((t) => helperSpecs(t));
/** Fused split_c epilogues (not built by compile-all: a plan asks for them), one set per target. */
const epilogueSpecs: SplitReduceSpec[] = TARGET_NAMES.flatMap((t) => [
  { ...defaultSpec(t, 'bf16', 8), epilogue: { act: 'silu', bias: 'fp32', residual: true } },
  { ...defaultSpec(t, 'fp16', 8), epilogue: { act: 'relu', bias: 'dtype', residual: false } },
]);
const insts = (spec: SplitReduceSpec): Instruction[] =>
  buildSplitReduce(spec).getFunction(kernelName(spec))!.blocks.flatMap((b) => b.instructions);

describe('kernel IR', () => {
  it('the same spec prints the same bytes; different specs differ', () => {
    const spec = defaultSpec('gfx950', 'bf16', 8);
    expect(emitSplitReduce(spec).ir).toBe(emitSplitReduce({ ...spec }).ir);
    expect(emitSplitReduce(spec).ir).not.toBe(emitSplitReduce({ ...spec, slicesPerStep: 2 }).ir);
  });

  it('an invalid spec is a SplitReduceError carrying the validation reason', () => {
    expect(() => buildSplitReduce({ ...defaultSpec('gfx950', 'fp16', 4), threads: 32 })).toThrow(SplitReduceError);
    expect(() => buildSplitReduce({ ...defaultSpec('gfx950', 'fp16', 4), threads: 32 })).toThrow(/invalid split-reduce spec: threads 32 is not a multiple of gfx950's wave size 64/);
  });

  it('launch bounds and IEEE denormals are attributes of the kernel on both vendors', () => {
    const attrs = (spec: SplitReduceSpec) => buildSplitReduce(spec).getFunction(kernelName(spec))!.attributes;
    expect(attrs(defaultSpec('gfx950', 'fp16', 4))).toEqual(expect.arrayContaining([
      { key: 'amdgpu-flat-work-group-size', value: '256,256' }, { key: 'denormal-fp-math-f32', value: 'ieee,ieee' },
    ]));
    expect(attrs(defaultSpec('sm_90', 'fp16', 4))).toEqual(expect.arrayContaining([
      { key: 'nvvm.maxntid', value: '256,1,1' }, { key: 'denormal-fp-math-f32', value: 'ieee,ieee' },
    ]));
  });

  it('sm_90 waits for the grid ahead (the conv) before its first load, then lets the next grid launch; AMD has neither', () => {
    const text = emitSplitReduce(defaultSpec('sm_90', 'bf16', 8)).ir;
    const wait = text.indexOf('call void @llvm.nvvm.griddepcontrol.wait()');
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThan(text.indexOf('call void @llvm.nvvm.griddepcontrol.launch.dependents()'));
    expect(wait).toBeLessThan(text.search(/= load /));
    expect(emitSplitReduce(defaultSpec('gfx950', 'bf16', 8)).ir).not.toContain('griddepcontrol');
  });

  it('adds in fp32 without fast-math flags and rounds with fptrunc to the output type', () => {
    for (const dtype of ['fp16', 'bf16'] as const) {
      const all = insts(defaultSpec('sm_90', dtype, 8));
      const fadds = all.filter((i) => i.op === 'fadd');
      expect(fadds.length).toBeGreaterThan(0);
      for (const f of fadds) expect((f as Instruction & { flags: string[] }).flags).toEqual([]);
      const truncs = all.filter((i) => i.op === 'fptrunc');
      expect(truncs.length).toBeGreaterThan(0);
      const elem = (t: Instruction['type']) => (t.kind === 'vector' ? t.elem : t);
      for (const t of truncs) expect(elem(t.type)).toEqual({ kind: 'float', name: dtype === 'fp16' ? 'half' : 'bfloat' });
      expect(all.some((i) => i.op === 'atomicrmw')).toBe(false); // deterministic: no atomics
    }
  });
});

describe('goldens', () => {
  it('every compile-all spec matches its stored digest (npm run goldens:update after an intended change)', () => {
    const cases: GoldenCase[] = [...allHelperSpecs, ...epilogueSpecs].map((s) => ({ name: kernelName(s), flavor: getTarget(s.target).flavor, text: emitSplitReduce(s).ir }));
    expect(cases).toHaveLength(18);
    const report = checkGoldens(cases, GOLDEN_FILE);
    if (!goldenUpdateRequested()) expect(report.matched).toBe(cases.length);
  });
});

const tc = findToolchain();

describe('every golden config compiles with LLVM 22', () => {
  it.each([...allHelperSpecs, ...epilogueSpecs].map((s) => [kernelName(s), s] as const))('%s', async (name, spec) => {
    const target = getTarget(spec.target);
    const r = await compile(emitSplitReduce(spec).ir, target, { toolchain: tc });
    const storeBytes = spec.vectorWidth * 2;
    if (r.vendor === 'amd') {
      expect(Array.from(r.object.subarray(0, 4))).toEqual([0x7f, 0x45, 0x4c, 0x46]);
      const asm = await disassemble(r.object, target, tc);
      expect(asm).toContain(`<${name}>:`);
      expect(asm).toMatch(/buffer_load_dwordx4 /); // 16-byte loads
      expect(asm).toMatch(storeBytes === 16 ? /buffer_store_dwordx4 / : /buffer_store_dwordx2 /);
      expect(asm).toMatch(/buffer_store_short /); // the tail's element stores
      expect(asm).not.toMatch(/scratch_|buffer_store_dword v\d+, off, s\[0:3\]/); // no spills to scratch
    } else {
      expect(r.ptx).toContain(`.entry ${name}(`);
      expect(r.ptx).toMatch(/ld\.global(\.nc)?\.v4\.(f32|b32)/);
      expect(r.ptx).toMatch(storeBytes === 16 ? /st\.global\.v4\.b32/ : /st\.global\.v2\.b32/);
      expect(r.ptx).toContain(spec.dtype === 'fp16' ? 'cvt.rn.f16x2.f32' : 'cvt.rn.bf16x2.f32');
      if (tc.ptxas) {
        expect(r.cubin).toBeDefined();
        expect(r.ptxasLog).toMatch(/0 bytes spill stores, 0 bytes spill loads/);
      }
    }
  });
});
