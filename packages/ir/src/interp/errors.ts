/** Errors raised while compiling or running a kernel in the interpreter. */

/**
 * A kernel did something the interpreter refuses: an out-of-bounds access, a divergent barrier,
 * an unmodeled intrinsic, a bad launch. `where` names the instruction when there is one.
 */
export class InterpretError extends Error {
  override readonly name = 'InterpretError';
  /** Instruction and lane context, e.g. `@k %entry #3 (load %x) in workgroup (0,0,0) thread (5,0,0)`. */
  where: string | undefined;
  /** The message without the location. */
  readonly reason: string;
  constructor(reason: string, where?: string) {
    super(where ? `${reason} [at ${where}]` : reason);
    this.reason = reason;
    this.where = where;
  }

  /** Returns a copy of this error located at `where` (keeps the innermost location if one is set). */
  locate(where: string): InterpretError {
    if (this.where) return this;
    const e = new InterpretError(this.reason, where);
    e.stack = this.stack;
    return e;
  }
}

/** Throws an {@link InterpretError} (usable in expressions). */
export function fail(reason: string): never {
  throw new InterpretError(reason);
}
