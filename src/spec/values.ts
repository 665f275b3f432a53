/**
 * @module spec/values
 * The value-level helpers the agent document reader shares: paths, credential names, `${VAR}`
 * references and an iterative copy of free-form JSON.
 *
 * Imports nothing, so the `./spec` entry stays loadable in a browser. Nothing here recurses: a
 * value nested a hundred thousand levels deep is walked with an explicit stack.
 */

/** A JSON object as the reader builds it. */
export type JsonObject = { [key: string]: JsonValue };

/** A JSON value as the reader builds it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

/** Receives one warning sentence, already prefixed with the path it is about. */
export type WarningSink = (path: string, message: string) => void;

/** How deep a free-form value (extraBody, a hook's arguments) may nest before it is dropped. */
export const MAX_VALUE_DEPTH = 64;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Appends a key or an index to a path: `a.b`, `a[2]`, `a["odd key"]`. */
export function joinPath(base: string, key: string | number): string {
  if (typeof key === "number") return `${base}[${key}]`;
  if (IDENTIFIER.test(key)) return base === "" ? key : `${base}.${key}`;
  return `${base}[${JSON.stringify(key)}]`;
}

/** Whether a value is a plain object (JSON's kind of object), not an array, a date or a class instance. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Sets an own property, so a key spelled `__proto__` is data rather than a prototype change. */
export function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Reads an own property only; an inherited one (`toString`, `__proto__`) reads as absent. */
export function ownValue(source: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(source, key) ? source[key] : undefined;
}

/** Describes a value's kind for a warning, without quoting the value. */
export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return isPlainObject(value) ? "an object" : "a non-JSON object";
  if (typeof value === "number" && !Number.isFinite(value)) return "a non-finite number";
  return `a ${typeof value}`;
}

/**
 * Removes every `${NAME}` reference from a string, leaving what was written around them.
 *
 * A `${` with no `}` after it is text, as is everything after it. Linear in the string: each
 * reference's end is searched for once, and a `${` with no `}` after it ends the search.
 */
export function withoutReferences(text: string): string {
  let out = "";
  let from = 0;
  for (;;) {
    const open = text.indexOf("${", from);
    if (open < 0) break;
    const close = text.indexOf("}", open + 2);
    if (close < 0) break;
    out += text.slice(from, open);
    from = close + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

// ASCII classes of a code unit: a capital, a small letter, a digit.
const isUpper = (code: number): boolean => code >= 0x41 && code <= 0x5a;
const isLower = (code: number): boolean => code >= 0x61 && code <= 0x7a;
const isDigit = (code: number): boolean => code >= 0x30 && code <= 0x39;

/**
 * Splits a field name into lower-case words at `_`, `-`, `.`, spaces (anything but an ASCII
 * letter or digit) and camelCase boundaries: before a capital that follows a small letter or a
 * digit (`apiKey`, `v2Api`), and before the last capital of a run that a small letter follows
 * (`HTTPServer`). One pass, linear in the name.
 */
export function nameWords(name: string): string[] {
  const words: string[] = [];
  let start = -1;
  for (let index = 0; index <= name.length; index += 1) {
    const code = index < name.length ? name.charCodeAt(index) : -1;
    const alphanumeric = isUpper(code) || isLower(code) || isDigit(code);
    if (!alphanumeric) {
      if (start >= 0) words.push(name.slice(start, index).toLowerCase());
      start = -1;
      continue;
    }
    if (start < 0) {
      start = index;
      continue;
    }
    if (isUpper(code)) {
      const before = name.charCodeAt(index - 1);
      const after = index + 1 < name.length ? name.charCodeAt(index + 1) : -1;
      if (isLower(before) || isDigit(before) || (isUpper(before) && isLower(after))) {
        words.push(name.slice(start, index).toLowerCase());
        start = index;
      }
    }
  }
  return words;
}

const CREDENTIAL_LAST_WORDS: ReadonlySet<string> = new Set([
  "key",
  "apikey",
  "token",
  "secret",
  "password",
  "passwd",
  "passphrase",
  "credential",
  "credentials",
  "auth",
  "authorization",
  "bearer",
  "cookie",
  "pat",
]);

const CREDENTIAL_ANY_WORDS: ReadonlySet<string> = new Set([
  "apikey",
  "secret",
  "password",
  "passwd",
  "passphrase",
  "credential",
  "credentials",
  "authorization",
]);

/**
 * The longest name read as a field, flag or header name; a longer one (a key of a hundred
 * thousand characters) is nobody's name for a credential, and is not split into words.
 */
export const MAX_NAME_LENGTH = 256;

/**
 * Whether a field name reads like a credential: apiKey, api_key, X-Api-Key, token, accessToken,
 * client_secret, password, Authorization … but not maxTokens, keyboard or AWS_ACCESS_KEY_ID. A
 * name longer than {@link MAX_NAME_LENGTH} does not.
 */
export function isCredentialName(name: string): boolean {
  if (name.length > MAX_NAME_LENGTH) return false;
  const words = nameWords(name);
  const last = words[words.length - 1];
  if (last === undefined) return false;
  if (CREDENTIAL_LAST_WORDS.has(last)) return true;
  return words.some((word) => CREDENTIAL_ANY_WORDS.has(word));
}

/** Options of {@link copyJsonValue}. */
export interface CopyOptions {
  /** Drop object keys named like a credential, with a warning. */
  dropCredentials: boolean;
  /** Where the value sits, for warnings. */
  path: string;
  /** Receives a warning per thing dropped. */
  warn: WarningSink;
  /** The deepest nesting kept; deeper containers are dropped. */
  maxDepth?: number | undefined;
}

interface CopyFrame {
  source: unknown[] | Record<string, unknown>;
  target: JsonValue[] | JsonObject;
  path: string;
  depth: number;
}

/**
 * Copies a free-form JSON value without recursion, dropping what JSON cannot hold.
 *
 * Non-finite numbers, functions, undefined, class instances, a container met twice (a cycle),
 * nesting past the depth limit and, where asked, credential-named keys are dropped with a
 * warning. A null object member reads as absent and goes silently; a null array element stays.
 * Returns undefined when the root itself cannot be kept.
 */
export function copyJsonValue(root: unknown, options: CopyOptions): JsonValue | undefined {
  const maxDepth = options.maxDepth ?? MAX_VALUE_DEPTH;
  // A plain set: it lives only as long as the call, and is faster than a weak one.
  const seen = new Set<object>();
  const stack: CopyFrame[] = [];
  const start = (value: unknown, path: string, depth: number): JsonValue | undefined => {
    if (value === null) return null;
    switch (typeof value) {
      case "string":
      case "boolean":
        return value;
      case "number":
        if (Number.isFinite(value)) return value;
        options.warn(path, "is not a finite number; dropped");
        return undefined;
      case "object":
        break;
      default:
        options.warn(path, `is ${kindOf(value)}, which JSON cannot hold; dropped`);
        return undefined;
    }
    const isArray = Array.isArray(value);
    if (!isArray && !isPlainObject(value)) {
      options.warn(path, "is not a JSON value; dropped");
      return undefined;
    }
    if (seen.has(value)) {
      options.warn(path, "refers to a container already met (a cycle); dropped");
      return undefined;
    }
    if (depth > maxDepth) {
      options.warn(path, `nests deeper than ${maxDepth} levels; dropped`);
      return undefined;
    }
    seen.add(value);
    const target: JsonValue[] | JsonObject = isArray ? [] : {};
    stack.push({ source: value as unknown[] | Record<string, unknown>, target, path, depth });
    return target;
  };
  const result = start(root, options.path, 0);
  while (stack.length > 0) {
    const frame = stack.pop() as CopyFrame;
    if (Array.isArray(frame.source)) {
      const target = frame.target as JsonValue[];
      for (let index = 0; index < frame.source.length; index += 1) {
        const copied = start(frame.source[index], joinPath(frame.path, index), frame.depth + 1);
        if (copied !== undefined) target.push(copied);
      }
      continue;
    }
    const target = frame.target as JsonObject;
    for (const key of Object.keys(frame.source)) {
      const path = joinPath(frame.path, key);
      const value = frame.source[key];
      if (value === null || value === undefined) continue;
      if (options.dropCredentials && isCredentialName(key)) {
        options.warn(path, "is named like a credential, and a document carries none; dropped");
        continue;
      }
      const copied = start(value, path, frame.depth + 1);
      if (copied !== undefined) setOwn(target, key, copied);
    }
  }
  return result;
}

/** Shortens a string for a warning, so a huge value does not make a huge message. */
export function quoteShort(text: string): string {
  const cut = text.length > 40 ? `${text.slice(0, 37)}...` : text;
  return JSON.stringify(cut);
}
