/**
 * The one error type this package throws for bad input: a malformed, truncated or hostile
 * ELF file, note, descriptor or attribute table. `offset` is the file byte offset where the
 * problem was found (or the start of the structure being decoded) so a report can point at it.
 */
export class ElfError extends Error {
  /** File byte offset of the offending structure. */
  readonly offset: number;
  /** What is wrong, without the offset (the message carries both). */
  readonly reason: string;

  constructor(reason: string, offset: number) {
    const at = Number.isFinite(offset) ? `0x${Math.max(0, Math.trunc(offset)).toString(16)}` : String(offset);
    super(`${reason} (at file offset ${at})`);
    this.name = 'ElfError';
    this.reason = reason;
    this.offset = offset;
  }
}
