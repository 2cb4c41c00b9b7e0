/**
 * The IR as plain data: module → functions → blocks → instructions. Every value carries its
 * type; every instruction has an `op` tag and named operand fields, so an interpreter can walk
 * it with one `switch (inst.op)`. Operands reference other values by object identity.
 */
import type { FloatType, FunctionType, IntType, PtrType, Type, VectorType } from './types.js';

// ---------------------------------------------------------------- constants

export interface ConstInt { readonly kind: 'const.int'; readonly type: IntType; /** Two's-complement value, normalized to the signed range of the width (i1 true = -1n). */ readonly value: bigint }
export interface ConstFloat { readonly kind: 'const.float'; readonly type: FloatType; /** Already rounded to the type's precision. */ readonly value: number }
export interface ConstNull { readonly kind: 'const.null'; readonly type: PtrType }
/** `zeroinitializer` of a vector, array or struct. */
export interface ConstZero { readonly kind: 'const.zero'; readonly type: Type }
export interface ConstPoison { readonly kind: 'const.poison'; readonly type: Type }
export interface ConstUndef { readonly kind: 'const.undef'; readonly type: Type }
export interface ConstVector { readonly kind: 'const.vector'; readonly type: VectorType; readonly elems: readonly Constant[] }

export type Constant = ConstInt | ConstFloat | ConstNull | ConstZero | ConstPoison | ConstUndef | ConstVector;

// ---------------------------------------------------------------- module-level values

/** A function parameter. `attributes` are printed before the name (`noalias`, `align 16`, ...). */
export interface Argument {
  readonly kind: 'arg';
  readonly type: Type;
  readonly index: number;
  readonly name: string;
  readonly attributes: string[];
}

/** A global variable; its value is a pointer into `addrspace` (3 = LDS / shared memory). */
export interface GlobalVariable {
  readonly kind: 'global';
  readonly name: string;
  readonly type: PtrType;
  readonly valueType: Type;
  readonly addrspace: number;
  readonly linkage: 'internal' | 'external' | 'private';
  /** Initializer; `undefined` for external globals (e.g. dynamic LDS). */
  readonly init: Constant | undefined;
  readonly align: number;
  readonly constant: boolean;
}

/** A function attribute: `key` alone (`convergent`) or a string pair (`"amdgpu-flat-work-group-size"="256,256"`). */
export interface FnAttribute {
  readonly key: string;
  readonly value?: string;
}

/** Calling conventions the targets use. */
export type CallingConv = 'amdgpu_kernel' | 'ptx_kernel';

/** A function definition or (when `blocks` is empty) a declaration. Used as a value it is a `ptr`. */
export interface IrFunction {
  readonly kind: 'function';
  readonly name: string;
  readonly type: PtrType;
  readonly sig: FunctionType;
  readonly args: readonly Argument[];
  readonly blocks: Block[];
  callingConv: CallingConv | undefined;
  readonly attributes: FnAttribute[];
  linkage: 'external' | 'internal';
}

/** Inline assembly callee (`asm sideeffect "..." , "..."`). */
export interface InlineAsm {
  readonly kind: 'asm';
  readonly sig: FunctionType;
  readonly asm: string;
  readonly constraints: string;
  readonly sideEffect: boolean;
}

/** A basic block. `name` is a hint; the printer makes labels unique per function. */
export interface Block {
  readonly kind: 'block';
  readonly name: string;
  readonly parent: IrFunction;
  readonly instructions: Instruction[];
}

// ---------------------------------------------------------------- instructions

export type IntBinaryOp = 'add' | 'sub' | 'mul' | 'udiv' | 'sdiv' | 'urem' | 'srem' | 'shl' | 'lshr' | 'ashr' | 'and' | 'or' | 'xor';
export type FloatBinaryOp = 'fadd' | 'fsub' | 'fmul' | 'fdiv' | 'frem';
export type BinaryOp = IntBinaryOp | FloatBinaryOp;
export type CastOp = 'trunc' | 'zext' | 'sext' | 'fptrunc' | 'fpext' | 'fptoui' | 'fptosi' | 'uitofp' | 'sitofp' | 'bitcast' | 'ptrtoint' | 'inttoptr' | 'addrspacecast';
export type IcmpPred = 'eq' | 'ne' | 'ugt' | 'uge' | 'ult' | 'ule' | 'sgt' | 'sge' | 'slt' | 'sle';
export type FcmpPred = 'false' | 'oeq' | 'ogt' | 'oge' | 'olt' | 'ole' | 'one' | 'ord' | 'ueq' | 'ugt' | 'uge' | 'ult' | 'ule' | 'une' | 'uno' | 'true';
export type AtomicOrdering = 'monotonic' | 'acquire' | 'release' | 'acq_rel' | 'seq_cst';
/** Binary-op flags: `nuw`/`nsw` (add, sub, mul, shl), `exact` (div, shr), fast-math flags on float ops. */
export type InstFlag = 'nuw' | 'nsw' | 'exact' | 'fast' | 'contract' | 'reassoc' | 'nnan' | 'ninf' | 'nsz' | 'arcp' | 'afn';

interface InstBase {
  readonly kind: 'inst';
  /** Result type (`void` for instructions without a result). */
  readonly type: Type;
  /** Name hint; the printer numbers unnamed results `%0, %1, ...` and uniquifies hints. */
  readonly name: string | undefined;
}

export interface BinaryInst extends InstBase { readonly op: BinaryOp; readonly lhs: Value; readonly rhs: Value; readonly flags: readonly InstFlag[] }
export interface FnegInst extends InstBase { readonly op: 'fneg'; readonly operand: Value; readonly flags: readonly InstFlag[] }
export interface CastInst extends InstBase { readonly op: CastOp; readonly value: Value }
export interface GepInst extends InstBase { readonly op: 'gep'; readonly sourceType: Type; readonly base: Value; readonly indices: readonly Value[]; readonly inbounds: boolean }
export interface LoadInst extends InstBase { readonly op: 'load'; readonly ptr: Value; readonly align: number; readonly volatile: boolean }
export interface StoreInst extends InstBase { readonly op: 'store'; readonly value: Value; readonly ptr: Value; readonly align: number; readonly volatile: boolean }
export interface IcmpInst extends InstBase { readonly op: 'icmp'; readonly pred: IcmpPred; readonly lhs: Value; readonly rhs: Value }
export interface FcmpInst extends InstBase { readonly op: 'fcmp'; readonly pred: FcmpPred; readonly lhs: Value; readonly rhs: Value }
export interface SelectInst extends InstBase { readonly op: 'select'; readonly cond: Value; readonly ifTrue: Value; readonly ifFalse: Value }
export interface PhiIncoming { readonly value: Value; readonly block: Block }
/** `incoming` grows while loops are built (see Builder.addIncoming). */
export interface PhiInst extends InstBase { readonly op: 'phi'; readonly incoming: PhiIncoming[] }
export interface BrInst extends InstBase { readonly op: 'br'; readonly dest: Block }
export interface CondBrInst extends InstBase { readonly op: 'condbr'; readonly cond: Value; readonly ifTrue: Block; readonly ifFalse: Block }
export interface RetInst extends InstBase { readonly op: 'ret'; readonly value: Value | undefined }
export interface UnreachableInst extends InstBase { readonly op: 'unreachable' }
/** A call; intrinsics are `IrFunction` declarations whose name starts with `llvm.`. `attributes` are call-site function attributes. */
export interface CallInst extends InstBase { readonly op: 'call'; readonly callee: IrFunction | InlineAsm; readonly args: readonly Value[]; readonly attributes: readonly string[] }
export interface ExtractElementInst extends InstBase { readonly op: 'extractelement'; readonly vector: Value; readonly index: Value }
export interface InsertElementInst extends InstBase { readonly op: 'insertelement'; readonly vector: Value; readonly element: Value; readonly index: Value }
/** `mask[i]` picks element i of the result from `a ++ b`; -1 means poison. */
export interface ShuffleVectorInst extends InstBase { readonly op: 'shufflevector'; readonly a: Value; readonly b: Value; readonly mask: readonly number[] }
export interface ExtractValueInst extends InstBase { readonly op: 'extractvalue'; readonly aggregate: Value; readonly indices: readonly number[] }
export interface InsertValueInst extends InstBase { readonly op: 'insertvalue'; readonly aggregate: Value; readonly element: Value; readonly indices: readonly number[] }
/** `syncscope` undefined = system scope; targets use `"workgroup"`, `"agent"`, `"wavefront"`. */
export interface FenceInst extends InstBase { readonly op: 'fence'; readonly ordering: AtomicOrdering; readonly syncscope: string | undefined }
export type AtomicRmwOp = 'xchg' | 'add' | 'sub' | 'and' | 'or' | 'xor' | 'max' | 'min' | 'umax' | 'umin' | 'fadd' | 'fmax' | 'fmin';
export interface AtomicRmwInst extends InstBase { readonly op: 'atomicrmw'; readonly operation: AtomicRmwOp; readonly ptr: Value; readonly value: Value; readonly ordering: AtomicOrdering; readonly syncscope: string | undefined; readonly align: number }

export type Instruction =
  | BinaryInst | FnegInst | CastInst | GepInst | LoadInst | StoreInst | IcmpInst | FcmpInst | SelectInst | PhiInst
  | BrInst | CondBrInst | RetInst | UnreachableInst | CallInst | ExtractElementInst | InsertElementInst
  | ShuffleVectorInst | ExtractValueInst | InsertValueInst | FenceInst | AtomicRmwInst;

/** Anything an instruction can take as an operand. */
export type Value = Constant | Argument | GlobalVariable | IrFunction | Instruction;

/** Module flag: `!{i32 behavior, !"key", i32 value}` (behavior 1 = Error, 7 = Max, ...). */
export interface ModuleFlag {
  readonly behavior: number;
  readonly key: string;
  readonly value: number;
}

export const isTerminator = (i: Instruction): boolean => i.op === 'br' || i.op === 'condbr' || i.op === 'ret' || i.op === 'unreachable';
export const isConstant = (v: Value): v is Constant => v.kind.startsWith('const.');

/** Every value operand of an instruction, in printed order (blocks excluded). For generic walks. */
export function operandsOf(i: Instruction): Value[] {
  switch (i.op) {
    case 'fneg': return [i.operand];
    case 'gep': return [i.base, ...i.indices];
    case 'load': return [i.ptr];
    case 'store': return [i.value, i.ptr];
    case 'icmp': case 'fcmp': return [i.lhs, i.rhs];
    case 'select': return [i.cond, i.ifTrue, i.ifFalse];
    case 'phi': return i.incoming.map((x) => x.value);
    case 'br': case 'unreachable': case 'fence': return [];
    case 'condbr': return [i.cond];
    case 'ret': return i.value ? [i.value] : [];
    case 'call': return [...i.args];
    case 'extractelement': return [i.vector, i.index];
    case 'insertelement': return [i.vector, i.element, i.index];
    case 'shufflevector': return [i.a, i.b];
    case 'extractvalue': return [i.aggregate];
    case 'insertvalue': return [i.aggregate, i.element];
    case 'atomicrmw': return [i.ptr, i.value];
    default: return 'lhs' in i ? [i.lhs, i.rhs] : [i.value];
  }
}
