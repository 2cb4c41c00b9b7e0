/**
 * The launch-plan shape shared by the kernel packages that plan launches and the runtimes that
 * run them: one kernel launch in stream order, with its argument table and values. Buffers are
 * named, not addressed, so a plan is pure data until a runtime binds the names to device memory.
 */
import type { KernargType } from './kernarg.js';

/** A pointer argument as a plan holds it: a view of the bound buffer `buffer` at a byte offset. */
export interface BufferView<Buffer extends string = string> {
  readonly buffer: Buffer;
  readonly offsetBytes: number;
}

/** A planned kernel argument: a scalar, or a view of a buffer the runtime binds. */
export type LaunchKernarg<Buffer extends string = string> = number | bigint | BufferView<Buffer>;

/**
 * One launch of a planned sequence. `Role` names which of the plan's kernels runs (the runtime
 * loads a kernel per role); `Buffer` the buffers its pointer arguments view.
 */
export interface SequencedLaunch<Role extends string = string, Buffer extends string = string> {
  readonly role: Role;
  readonly kernelName: string;
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedBytes: number;
  /** The kernel's argument table: the order and types `kernargs` are packed in. */
  readonly signature: readonly { readonly name: string; readonly type: KernargType }[];
  /** Values in `signature` order. */
  readonly kernargs: readonly LaunchKernarg<Buffer>[];
  /**
   * Launch as a programmatic dependent of the launch ahead of it: only where the target has grid
   * dependency control and both kernels wait for the grid ahead at entry, so a launch's start-up
   * may overlap the previous kernel's tail without reading early.
   */
  readonly programmatic: boolean;
}
