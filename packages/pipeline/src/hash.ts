import { createHash } from 'node:crypto';

/** A JSON value as stored in the cache: no undefined, no functions, no non-finite numbers. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * Canonical JSON: object keys sorted by code unit, no whitespace, arrays in order.
 * Two equal values always give the same string, which is what makes it usable as a hash input.
 * Throws on values JSON cannot represent faithfully (undefined, NaN, Infinity, functions, bigint)
 * instead of silently dropping them the way JSON.stringify would.
 */
export function canonicalJson(value: unknown): string {
  return write(value, '$');
}

function write(value: unknown, path: string): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: ${path} is ${value}, which JSON cannot represent`);
      // -0 and 0 must hash alike; JSON.stringify(-0) is already "0".
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((v, i) => write(v, `${path}[${i}]`)).join(',')}]`;
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) {
        throw new TypeError(`canonicalJson: ${path} is a ${(value as object).constructor?.name ?? 'non-plain object'}, not a plain object`);
      }
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj).sort();
      const parts: string[] = [];
      for (const key of keys) {
        const v = obj[key];
        if (v === undefined) throw new TypeError(`canonicalJson: ${path}.${key} is undefined; omit the key or use null`);
        parts.push(`${JSON.stringify(key)}:${write(v, `${path}.${key}`)}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      throw new TypeError(`canonicalJson: ${path} has type ${typeof value}, which JSON cannot represent`);
  }
}

/** Lower-case hex SHA-256 of a string (UTF-8) or bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** True for a 64-character lower-case hex digest. */
export function isSha256Hex(text: string): boolean {
  return /^[0-9a-f]{64}$/.test(text);
}
