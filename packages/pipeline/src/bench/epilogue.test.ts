import { describe, expect, it } from 'vitest';
import { makeProblem } from '@rocke/reference';
import { benchEpilogueData, epilogueShapeText, parseEpilogueShape } from './epilogue.js';

describe('bench epilogue shapes', () => {
  it('reads act[:b32|:bd][:res] and writes it back', () => {
    expect(parseEpilogueShape('silu:b32:res')).toEqual({ act: 'silu', bias: 'fp32', residual: true });
    expect(parseEpilogueShape('relu:bd')).toEqual({ act: 'relu', bias: 'dtype', residual: false });
    expect(parseEpilogueShape('gelu')).toEqual({ act: 'gelu', bias: 'none', residual: false });
    for (const text of ['silu:b32:res', 'relu:bd', 'none:res', 'clamp']) expect(epilogueShapeText(parseEpilogueShape(text) as never)).toBe(text);
  });

  it('names what is wrong', () => {
    expect(parseEpilogueShape('swish')).toMatch(/^epilogue: the activation must be one of none, relu, /);
    expect(parseEpilogueShape('relu:b32:bd')).toBe("epilogue: 'bd' is not b32, bd or res (each at most once; one bias kind)");
    expect(parseEpilogueShape('none')).toBe('epilogue: none:… with neither bias nor residual is the bare conv');
  });

  it('makes seeded bias and residual data and the reference values that match them', () => {
    const p = { ...makeProblem({ N: 1, H: 4, W: 4, C: 8, K: 16, R: 3, S: 3, padH: 1, padW: 1, dtype: 'bf16' }) };
    const d = benchEpilogueData({ act: 'leaky_relu', bias: 'fp32', residual: true }, p.dtype, p.K, 256, 5);
    expect(d.bias).toBeInstanceOf(Float32Array);
    expect(d.bias).toHaveLength(16);
    expect(d.residual).toHaveLength(256);
    expect(d.values).toMatchObject({ act: 'leaky_relu', alpha: 1, beta: 1, slope: 0.01, bias: d.bias, residual: d.residual });
    expect(benchEpilogueData({ act: 'clamp', bias: 'dtype', residual: false }, p.dtype, p.K, 256, 5).values).toMatchObject({ lo: 0, hi: 6 });
  });
});
