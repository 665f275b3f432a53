/**
 * @module text/error-base
 * The base every error of the package extends, and the marker that lets an error thrown by one
 * copy of the package be recognised by another.
 *
 * A host can end up with two copies (a bundled one and a dependency's own), and an error from
 * one is then not `instanceof` the other's class. So each class writes its name, and the names of
 * the classes it extends, under one `Symbol.for` key on its prototype, a key every copy reads the
 * same; each class's static `is` reads that list. The names are written out, not read off the
 * constructors, since a minifier renames classes.
 */

/** The key under which every error of the package carries the names of its class chain. */
export const ERROR_MARKER: unique symbol = Symbol.for("@cubicecho/agent-core/error");

/** What every error's options carry besides its own fields. */
export interface AgentCoreErrorOptions {
  /** The message, where the class's own wording (written from the fields) does not suit. */
  message?: string | undefined;
  /** What went wrong underneath: the caught error, the server's refusal. */
  cause?: unknown;
}

/**
 * The base of every error the package throws: a stable `name`, the original on `cause`, and a
 * marker that works across copies of the package.
 *
 * Each error takes one options object: its own fields, `cause` and, where its own wording does
 * not suit, `message`. `AgentCoreError.is(value)` tells any of them from anything else, and each
 * class's static `is` tells that class (its subclasses included), also for an error thrown by
 * another copy of the package, where `instanceof` answers false.
 *
 * @example
 * ```ts
 * try { await runAgentLoop(options); } catch (error) {
 *   if (ContextOverflow.is(error)) return compactAndRetry();
 *   if (AgentCoreError.is(error)) log.warn(error.name, error.message);
 *   throw error;
 * }
 * ```
 */
export abstract class AgentCoreError extends Error {
  /** The class's name, the same in every copy of the package. */
  abstract override readonly name: string;

  static {
    brand(this, "AgentCoreError");
  }

  /** Sets the message and, where one is given, the cause. */
  protected constructor(options: AgentCoreErrorOptions) {
    super(options.message ?? "", options.cause === undefined ? undefined : { cause: options.cause });
  }

  /** Tells any error of this package from anything else, also one from another copy of it. */
  static is(value: unknown): value is AgentCoreError {
    return markerOf(value)?.includes("AgentCoreError") ?? false;
  }

  /**
   * Marks a subclass with its name, so every copy of the package recognises its errors; call it
   * once from the subclass's static block: `static { AgentCoreError.mark(this, "MyError"); }`.
   *
   * @param constructor - The subclass.
   * @param name - The subclass's name as its `name` field spells it.
   */
  static mark(constructor: { readonly prototype: AgentCoreError }, name: string): void {
    brand(constructor, name);
  }

  /**
   * Whether a value is an error of the class called `name` (a subclass included), from any copy
   * of the package; a subclass's static `is` answers with it. Never throws.
   *
   * @param value - Anything caught.
   * @param name - The class's name.
   * @param field - A field an unmarked stand-in must carry to count.
   */
  static isNamed(value: unknown, name: string, field?: string): boolean {
    return isErrorNamed(value, name, field);
  }
}

/**
 * Writes a class's name in front of its parent's names under {@link ERROR_MARKER} on the class's
 * prototype, so every instance (and every instance of a subclass) carries the chain.
 *
 * Called once per class, from its static block.
 */
export function brand(constructor: { readonly prototype: AgentCoreError }, name: string): void {
  const parent = markerOf(Object.getPrototypeOf(constructor.prototype)) ?? [];
  Object.defineProperty(constructor.prototype, ERROR_MARKER, { value: Object.freeze([name, ...parent]), enumerable: false });
}

/** The names a value's marker lists, most specific first; undefined where it carries none. */
function markerOf(value: unknown): readonly unknown[] | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  try {
    const names = (value as { [ERROR_MARKER]?: unknown })[ERROR_MARKER];
    return Array.isArray(names) ? names : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a value is an error of the class called `name` or of a subclass of it, from any copy of
 * the package; never throws.
 *
 * A value with the marker is judged by it alone. An Error without one is recognised by its `name`
 * (and, where `field` is given, by carrying that field), the one thing a copy that sets no
 * marker, or a hand-made stand-in, carries.
 */
export function isErrorNamed(value: unknown, name: string, field?: string): boolean {
  const names = markerOf(value);
  try {
    if (names) return names.includes(name);
    return value instanceof Error && value.name === name && (field === undefined || field in value);
  } catch {
    return false;
  }
}
