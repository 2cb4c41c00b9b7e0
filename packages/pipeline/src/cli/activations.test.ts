import * as ir from '@rocke/ir';
import * as reference from '@rocke/reference';
import { describe, expect, it } from 'vitest';
import { benchManifestSchema } from '../bench/manifest.js';
import { EPILOGUE_USAGE } from './epilogue-args.js';

// @rocke/ir owns the activations the kernels compile; @rocke/reference keeps its own list so the
// oracle does not import the code it checks. This package uses both, so it checks they agree.
describe('the activation vocabulary', () => {
  it('is the same list, in the same order, in @rocke/ir and @rocke/reference', () => {
    expect([...reference.ACTIVATIONS]).toEqual([...ir.ACTIVATIONS]);
  });

  it('every activation has an fp64 definition in the reference (finite, and not the identity except none)', () => {
    const p = { slope: 0.1, lo: -1, hi: 1 };
    for (const act of ir.ACTIVATIONS) {
      const values = [-4, -0.5, 0.5, 4].map((z) => reference.activate(act, z, p));
      expect(values.every(Number.isFinite), act).toBe(true);
      expect(values.join() === '-4,-0.5,0.5,4', act).toBe(act === 'none');
    }
  });

  it('rocke run usage and the bench manifest schema list exactly these', () => {
    expect(/--act (\S+)/.exec(EPILOGUE_USAGE)![1]!.split('|')).toEqual([...ir.ACTIVATIONS]);
    const act = benchManifestSchema.shape.epilogue.unwrap().shape.act;
    expect(act.options).toEqual([...ir.ACTIVATIONS]);
  });
});
