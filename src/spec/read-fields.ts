/**
 * @module spec/read-fields
 * Reads the fields of an agent document against tables of their kinds: one value checked against
 * its kind and range, an object's fields against a table, and a list of entries merged by a key.
 *
 * A value of the wrong kind, out of range or unknown to the table is dropped with a warning, never
 * clamped or guessed at; a container the format's structure hangs on that is of the wrong kind is
 * a refusal. Imports nothing but its sibling helpers, so the `./spec` entry stays browser-safe.
 */
import { urlSign } from "./secrets.js";
import { copyJsonValue, isCredentialName, isPlainObject, joinPath, kindOf, ownValue, quoteShort, setOwn, type JsonObject, type JsonValue } from "./values.js";

/** The kind of value one field of the document holds, and its bounds where it has any. */
export type Field =
  | { kind: "string" }
  | { kind: "endpoint" }
  | { kind: "number"; min: number; max?: number; integer?: boolean; above?: boolean }
  | { kind: "choice"; values: readonly string[] }
  | { kind: "boolean" }
  | { kind: "json" }
  | { kind: "strings" }
  | { kind: "stringMap" };

/**
 * The most entries a bundled server's `args` may hold; past it the list can only be garbage (a
 * real command line holds tens), and the server is dropped rather than run with other arguments.
 */
export const MAX_SERVER_ARGS = 4096;

/** Reads values against field tables, collecting every refusal and warning rather than stopping at one. */
export class FieldReader {
  readonly errors: string[] = [];
  readonly warnings: string[] = [];
  /** The paths of string lists refused whole for their length, so their owner can be dropped. */
  readonly overlong = new Set<string>();

  /** Whether warning sentences are built at all. */
  readonly collecting: boolean;

  /** @param collecting - Whether warning sentences are built at all. */
  constructor(collecting: boolean) {
    this.collecting = collecting;
    if (!this.collecting) this.warn = () => {};
  }

  warn = (path: string, message: string): void => {
    this.warnings.push(`${path}: ${message}`);
  };

  refuse(path: string, message: string): void {
    this.errors.push(`${path}: ${message}`);
  }

  /** A container the format's structure hangs on: null is absent, the wrong kind is a refusal. */
  container(value: unknown, path: string, kind: "object" | "array"): Record<string, unknown> | unknown[] | undefined {
    if (value === null || value === undefined) return undefined;
    if (kind === "array" ? Array.isArray(value) : isPlainObject(value)) return value as Record<string, unknown>;
    this.refuse(path, `must be ${kind === "array" ? "an array" : "an object"}, not ${kindOf(value)}`);
    return undefined;
  }

  /** Reads one object's fields against a table; unknown and credential-named keys are dropped. */
  fields(source: Record<string, unknown>, path: string, table: Record<string, Field>, skip: readonly string[] = []): JsonObject {
    const out: JsonObject = {};
    for (const key of Object.keys(source)) {
      if (skip.includes(key)) continue;
      const fieldPath = joinPath(path, key);
      const value = source[key];
      if (value === null || value === undefined) continue;
      const field = Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
      if (field === undefined) {
        this.warn(
          fieldPath,
          isCredentialName(key) ? "is named like a credential, and a document carries none; dropped" : "is not a field this format knows; dropped",
        );
        continue;
      }
      const read = this.field(value, fieldPath, field);
      if (read !== undefined) setOwn(out, key, read);
    }
    return out;
  }

  field(value: unknown, path: string, field: Field): JsonValue | undefined {
    switch (field.kind) {
      case "string":
      case "endpoint":
        if (typeof value !== "string") return this.wrongKind(path, value, "a string");
        if (field.kind === "endpoint" && urlSign(value) !== undefined) {
          this.warn(path, "carries a credential in its URL, and a document carries none; dropped");
          return undefined;
        }
        return value;
      case "number":
        return this.number(value, path, field);
      case "choice":
        if (typeof value === "string" && field.values.includes(value)) return value;
        this.warn(path, `${typeof value === "string" ? quoteShort(value) : kindOf(value)} is not one of ${field.values.join(", ")}; dropped`);
        return undefined;
      case "boolean":
        return typeof value === "boolean" ? value : this.wrongKind(path, value, "true or false");
      case "json":
        if (!isPlainObject(value)) return this.wrongKind(path, value, "an object");
        return copyJsonValue(value, { dropCredentials: true, path, warn: this.warn });
      case "strings":
        return this.strings(value, path);
      case "stringMap":
        return this.stringMap(value, path);
    }
  }

  wrongKind(path: string, value: unknown, wanted: string): undefined {
    this.warn(path, `must be ${wanted}, not ${kindOf(value)}; dropped`);
    return undefined;
  }

  number(value: unknown, path: string, field: Extract<Field, { kind: "number" }>): number | undefined {
    if (typeof value !== "number" || !Number.isFinite(value)) return this.wrongKind(path, value, "a finite number");
    const tooLow = field.above ? value <= field.min : value < field.min;
    const tooHigh = value > (field.max ?? Number.MAX_SAFE_INTEGER);
    if (tooLow || tooHigh || (field.integer && !Number.isInteger(value))) {
      this.warn(path, `${value} is out of range (${describeRange(field)}); dropped, not clamped`);
      return undefined;
    }
    return value;
  }

  strings(value: unknown, path: string): string[] | undefined {
    if (!Array.isArray(value)) return this.wrongKind(path, value, "an array of strings");
    // Refused by its length before any scan or copy.
    if (value.length > MAX_SERVER_ARGS) {
      this.overlong.add(path);
      this.warn(path, `holds ${value.length} entries, more than the ${MAX_SERVER_ARGS} a server's args may; dropped`);
      return undefined;
    }
    // All strings, as a server's args are: one copy of the whole.
    if (value.every((item: unknown) => typeof item === "string")) return value.slice() as string[];
    const out: string[] = [];
    for (let index = 0; index < value.length; index += 1) {
      const item: unknown = value[index];
      if (typeof item === "string") out.push(item);
      else this.wrongKind(joinPath(path, index), item, "a string");
    }
    return out;
  }

  stringMap(value: unknown, path: string): JsonObject | undefined {
    if (!isPlainObject(value)) return this.wrongKind(path, value, "an object of strings");
    const out: JsonObject = {};
    for (const key of Object.keys(value)) {
      const item = value[key];
      if (item === null || item === undefined) continue;
      if (typeof item === "string") setOwn(out, key, item);
      else this.wrongKind(joinPath(path, key), item, "a string");
    }
    return out;
  }

  /** Reads entries merged by a key field (`id`, `name`): the same key again replaces in place. */
  entries(
    list: unknown[] | Record<string, unknown>,
    path: string,
    keyField: string,
    table: Record<string, Field>,
    check?: (entry: JsonObject, entryPath: string) => boolean,
  ): JsonObject[] {
    const out: JsonObject[] = [];
    const position = new Map<string, number>();
    const keyed = !Array.isArray(list);
    const keys = keyed ? Object.keys(list) : [];
    const count = keyed ? keys.length : list.length;
    for (let index = 0; index < count; index += 1) {
      const raw: unknown = keyed ? list[keys[index] as string] : list[index];
      const entryPath = keyed ? joinPath(path, keys[index] as string) : joinPath(path, index);
      if (raw === null || raw === undefined) continue;
      if (!isPlainObject(raw)) {
        this.wrongKind(entryPath, raw, "an object");
        continue;
      }
      const stated = this.fields(raw, entryPath, table, keyed ? [keyField] : []);
      const entry: JsonObject = keyed ? { ...named(keyField, keys[index] as string), ...stated } : stated;
      const key = ownValue(entry, keyField);
      if (typeof key !== "string" || key === "") {
        this.warn(entryPath, `has no ${keyField}, and an entry is merged by it; dropped`);
        continue;
      }
      if (check && !check(entry, entryPath)) continue;
      const earlier = position.get(key);
      if (earlier !== undefined) {
        this.warn(entryPath, `repeats the ${keyField} ${quoteShort(key)}; the later entry replaces the earlier`);
        out[earlier] = entry;
      } else {
        position.set(key, out.length);
        out.push(entry);
      }
    }
    return out;
  }
}

function describeRange(field: Extract<Field, { kind: "number" }>): string {
  const whole = field.integer ? "a whole number " : "";
  if (field.max !== undefined) return `${whole}from ${field.min} to ${field.max}`;
  return field.above ? `${whole}above ${field.min}` : `${whole}${field.min} or more`;
}

function named(keyField: string, key: string): JsonObject {
  const entry: JsonObject = {};
  setOwn(entry, keyField, key);
  return entry;
}
