import type { Module, Target } from '@rocke/ir';

export declare const CONV_TILE: { readonly th: number; readonly tw: number; readonly tk: number; readonly ck: number; readonly waves: number };
export interface ConvShape { readonly N: number; readonly H: number; readonly W: number; readonly C: number; readonly K: number }
export declare function buildConvKernel(t: Target, atomName: string): Module;
export declare function convLaunch(t: Target, shape: ConvShape): { grid: [number, number, number]; block: [number, number, number] };
export declare function referenceConv(x: ArrayLike<number>, w: ArrayLike<number>, shape: ConvShape): Float64Array;
