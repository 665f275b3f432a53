/**
 * @module wire/tools-cache
 * The declared form of a request's tools, rewritten once per tool definition and runtime instead
 * of once per request: the strict rewrite (sanitizeTools), the relaxed one a grammar-constrained
 * or strict-refusing endpoint gets (relaxTools), the notice of a tool sent with strict off, and
 * the JSON text of each declared definition (its length counts the tools' characters, and the
 * request is written from it).
 *
 * A definition is looked up by its object and checked against what it was rewritten from: the
 * same `function` object, `name`, `description` and `parameters` object. A host that adds,
 * removes, replaces or reorders tools, or gives a tool a new `parameters` object or description,
 * is seen on the next request; a definition the rewrite handed back unchanged (not a function
 * tool, or one it could not read) is never cached. The cache is a slot of the runtime state, so
 * `resetAll` and a fresh runtime start it empty.
 */

import type { ToolDefinition } from "../shapes/config.js";
import { defineSlot, slotOf, type RuntimeState } from "../state/state.js";
import { relaxTools, sanitizeTools } from "../text/schema-compat.js";

/** What a definition was rewritten from: a later request with other values rewrites it again. */
interface Source {
  fn: unknown;
  name: unknown;
  description: unknown;
  parameters: unknown;
}

/** One definition's rewrites, made on first need. */
interface Rewrites {
  source: Source;
  /** The strict rewrite, and the notice where it goes with strict off. */
  strict?: { tool: ToolDefinition; notice?: string };
  /** The relaxed rewrite. */
  relaxed?: ToolDefinition;
}

/** The cache kept in a runtime state. */
interface ToolsCache {
  /** By the host's definition object. */
  rewrites: WeakMap<object, Rewrites>;
}

const TOOLS = defineSlot<ToolsCache>("tools.declared", () => ({ rewrites: new WeakMap() }));

/**
 * Where a declared definition this cache made keeps its JSON text: a symbol-keyed property that
 * is not enumerable, so JSON, spreading and key listings never see it. The definitions are
 * shared by later requests and not changed, so the text stays what `JSON.stringify` writes.
 */
const DECLARED_JSON: unique symbol = Symbol("agent-core.declaredJson");

/** The JSON text of a definition this runtime declared; undefined for any other value. @internal */
export function declaredJsonOf(tool: unknown): string | undefined {
  if (typeof tool !== "object" || tool === null) return undefined;
  const json = (tool as { [DECLARED_JSON]?: unknown })[DECLARED_JSON];
  return typeof json === "string" ? json : undefined;
}

/** The tools as a request declares them, with the notices of those sent with strict off. */
export interface DeclaredTools {
  /** The rewritten definitions, in the order given; a fresh array each call. */
  tools: ToolDefinition[];
  /** `[notice, tool name]` for each tool past strict mode's limits, in order; only for strict schemas. */
  strictOff: Array<[text: string, tool: string]>;
}

function sourceOf(tool: object): Source | undefined {
  const fn = (tool as { function?: unknown }).function;
  if (typeof fn !== "object" || fn === null) return undefined;
  const { name, description, parameters } = fn as Record<string, unknown>;
  return { fn, name, description, parameters };
}

function sameSource(a: Source, b: Source): boolean {
  return a.fn === b.fn && a.name === b.name && a.description === b.description && a.parameters === b.parameters;
}

function measure(tool: ToolDefinition): void {
  try {
    Object.defineProperty(tool, DECLARED_JSON, { value: JSON.stringify(tool) });
  } catch {
    // Left unwritten: the array holding it is then measured and written whole, as it always was.
  }
}

/** One definition's strict rewrite, from the cache where its source is unchanged. */
function strictOf(cache: ToolsCache, tool: ToolDefinition): { tool: ToolDefinition; notice?: string } {
  if (typeof tool !== "object" || tool === null) return { tool };
  const source = sourceOf(tool);
  let entry = cache.rewrites.get(tool);
  if (entry && (!source || !sameSource(entry.source, source))) entry = undefined;
  if (entry?.strict) return entry.strict;
  let notice: string | undefined;
  const [out] = sanitizeTools([tool], { onNotice: (text) => (notice = text) });
  const made = { tool: out as ToolDefinition, ...(notice !== undefined ? { notice } : {}) };
  // A definition handed back as it came is the host's object, which may change: never kept.
  if (!source || made.tool === tool) {
    cache.rewrites.delete(tool);
    return made;
  }
  measure(made.tool);
  if (!entry) {
    entry = { source };
    cache.rewrites.set(tool, entry);
  }
  entry.strict = made;
  return made;
}

/** One definition's relaxed rewrite (of its strict one, as relaxTools reads it). */
function relaxedOf(cache: ToolsCache, tool: ToolDefinition, strict: ToolDefinition): ToolDefinition {
  const entry = typeof tool === "object" && tool !== null ? cache.rewrites.get(tool) : undefined;
  // strictOf ran first, so an entry here is current.
  if (entry?.relaxed && entry.strict?.tool === strict) return entry.relaxed;
  const [out] = relaxTools([strict]);
  const relaxed = out as ToolDefinition;
  if (entry?.strict?.tool === strict && relaxed !== strict) {
    measure(relaxed);
    entry.relaxed = relaxed;
  }
  return relaxed;
}

/**
 * The tools a request declares, rewritten for strict mode, or relaxed where `strict` is false,
 * each definition's rewrite made once per runtime while the definition stays the same. @internal
 */
export function declareToolsIn(state: RuntimeState, tools: readonly ToolDefinition[], strict: boolean): DeclaredTools {
  const cache = slotOf(state, TOOLS);
  const declared: ToolDefinition[] = [];
  const strictOff: Array<[text: string, tool: string]> = [];
  for (const tool of tools) {
    const made = strictOf(cache, tool);
    if (strict) {
      declared.push(made.tool);
      if (made.notice !== undefined) strictOff.push([made.notice, made.tool.function.name]);
    } else declared.push(relaxedOf(cache, tool, made.tool));
  }
  return { tools: declared, strictOff };
}

/**
 * The characters of a tool array's JSON, as `JSON.stringify(tools).length` counts them: added up
 * from the definitions this runtime declared, or written out where any other is in the array;
 * 0 for an array JSON cannot write. @internal
 */
export function toolsJsonCharsIn(_state: RuntimeState, tools: readonly ToolDefinition[]): number {
  let total = tools.length > 0 ? tools.length + 1 : 2;
  for (const tool of tools) {
    const known = declaredJsonOf(tool)?.length;
    if (known === undefined) {
      try {
        return JSON.stringify(tools)?.length ?? 0;
      } catch {
        return 0;
      }
    }
    total += known;
  }
  return total;
}
