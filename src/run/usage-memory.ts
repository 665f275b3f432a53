/**
 * @module usage-memory
 * What a host's own runs say about its tools: the words of each request beside the tools it
 * used, kept so that keyword preselection finds a tool by the words people actually use for it.
 *
 * A memory is a plain value the host makes with {@link createUsageMemory}, feeds with
 * {@link recordUsage} (runAgentLoop does after each answered run when given `usageMemory`) and
 * hands to preselectByKeywords as `memory`. It keeps the last `maxRequests` requests and forgets
 * the oldest first. Each request is kept as its terms (the same words the keyword index reads:
 * lower-cased, stemmed, English function words dropped, each once) and the tools' names, never
 * as its text. {@link exportUsageMemory} and {@link importUsageMemory} carry it across a restart
 * or to another replica, as exportCapabilities and importCapabilities carry the latches.
 */

import { termsOf } from "./keyword-index.js";
import { positiveInteger } from "../text/guards.js";

/** The most requests a usage memory keeps unless told otherwise; the oldest is forgotten first. */
export const USAGE_MEMORY_MAX_REQUESTS = 5_000;

/** The most distinct terms kept of one request; its first ones, in the order they were written. */
export const USAGE_MEMORY_MAX_TERMS = 32;

/** The most tools kept for one request; the first ones it used. */
export const USAGE_MEMORY_MAX_TOOLS = 8;

/** The longest term a memory keeps, in characters; a longer word (a hash, a path) is dropped. */
export const USAGE_MEMORY_TERM_CHARACTERS = 64;

/** The longest tool name a memory keeps, in characters. */
export const USAGE_MEMORY_NAME_CHARACTERS = 256;

/** Options for {@link createUsageMemory}. */
export interface UsageMemoryOptions {
  /**
   * The most requests to keep; recording one more forgets the oldest.
   * @default 5000
   */
  maxRequests?: number | undefined;
}

/** One remembered request: its terms and the tools it used. */
export interface RememberedRequest {
  /** The request's distinct terms, as the keyword index reads them. */
  readonly terms: readonly string[];
  /** The names of the tools it used, each once. */
  readonly tools: readonly string[];
}

/**
 * A bounded record of which tools past requests used, by their words; make one with
 * {@link createUsageMemory}.
 *
 * Keyword preselection reads it as a field of each tool's document: per term, per tool, how many
 * remembered requests had both. Its internal fields are the library's to change; read and
 * write it through the functions here.
 */
export interface UsageMemory {
  /** The most requests it keeps. */
  readonly maxRequests: number;
  /** How many requests it holds. */
  readonly size: number;
  /** Grows by one with every change, so a cache built on the memory knows when it is stale. */
  readonly revision: number;
  /** @internal Per term, per tool number, how many remembered requests had the term and used the tool. */
  readonly counts: ReadonlyMap<string, ReadonlyMap<number, number>>;
  /** @internal Per tool number, its name. */
  readonly names: readonly string[];
  /** @internal Per tool name, its number. */
  readonly numbers: ReadonlyMap<string, number>;
  /** @internal Per tool number, its length in the field: the terms of the requests that used it. */
  readonly lengths: readonly number[];
  /** @internal The mean length over the tools some remembered request uses; 0 when it holds none. */
  readonly averageLength: number;
  /** @internal Moves whenever the tools are numbered afresh, so a number stands for one name within an epoch. */
  readonly epoch: number;
  /** @internal The remembered requests, a ring of `maxRequests` slots. */
  readonly ring: readonly (RememberedRequest | undefined)[];
  /** @internal Where the oldest request sits in the ring. */
  readonly head: number;
  /** @internal Per tool number, how many remembered requests used it. */
  readonly uses: readonly number[];
  /** @internal How many tool numbers some remembered request uses. */
  readonly live: number;
  /** @internal The sum of every tool's length. */
  readonly totalLength: number;
}

/** The writable view of a memory, for this module alone. */
interface MemoryState {
  maxRequests: number;
  size: number;
  revision: number;
  ring: (RememberedRequest | undefined)[];
  head: number;
  counts: Map<string, Map<number, number>>;
  names: string[];
  numbers: Map<string, number>;
  lengths: number[];
  uses: number[];
  live: number;
  totalLength: number;
  averageLength: number;
  epoch: number;
}

/**
 * Makes an empty usage memory that keeps the last `maxRequests` requests.
 *
 * Preselection with an empty memory ranks exactly as it does without one.
 *
 * @param options - The cap.
 * @example
 * const memory = createUsageMemory();
 * const result = await runAgentLoop({ ...options, preselect: true, usageMemory: memory });
 * await writeFile("usage.json", JSON.stringify(exportUsageMemory(memory)));
 */
export function createUsageMemory(options: UsageMemoryOptions = {}): UsageMemory {
  const settings = options && typeof options === "object" ? options : {};
  const maxRequests = positiveInteger(settings.maxRequests) ?? USAGE_MEMORY_MAX_REQUESTS;
  const memory: MemoryState = {
    maxRequests,
    size: 0,
    revision: 0,
    ring: [],
    head: 0,
    counts: new Map(),
    names: [],
    numbers: new Map(),
    lengths: [],
    uses: [],
    live: 0,
    totalLength: 0,
    averageLength: 0,
    epoch: 0,
  };
  return memory as UsageMemory;
}

/** Tells whether a value is a usage memory this library made. */
export function isUsageMemory(value: unknown): value is UsageMemory {
  if (!value || typeof value !== "object") return false;
  const memory = value as Partial<MemoryState>;
  return (
    typeof memory.maxRequests === "number" &&
    Array.isArray(memory.ring) &&
    memory.counts instanceof Map &&
    memory.numbers instanceof Map &&
    Array.isArray(memory.names) &&
    Array.isArray(memory.lengths) &&
    Array.isArray(memory.uses)
  );
}

/** A request's terms as a memory keeps them: distinct, short enough, at most the cap. */
export function rememberedTerms(request: string): string[] {
  if (typeof request !== "string") return [];
  const kept = new Set<string>();
  for (const term of termsOf(request)) {
    if (term.length > USAGE_MEMORY_TERM_CHARACTERS) continue;
    kept.add(term);
    if (kept.size >= USAGE_MEMORY_MAX_TERMS) break;
  }
  return [...kept];
}

/** The tool names a memory keeps of a list: strings, not empty, short enough, each once, at most the cap. */
export function rememberedTools(used: unknown): string[] {
  if (!Array.isArray(used)) return [];
  const kept: string[] = [];
  for (const name of used) {
    if (typeof name !== "string" || name === "" || name.length > USAGE_MEMORY_NAME_CHARACTERS || kept.includes(name)) continue;
    kept.push(name);
    if (kept.length >= USAGE_MEMORY_MAX_TOOLS) break;
  }
  return kept;
}

function numberOf(memory: MemoryState, name: string): number {
  let tool = memory.numbers.get(name);
  if (tool === undefined) {
    tool = memory.names.length;
    memory.numbers.set(name, tool);
    memory.names.push(name);
    memory.lengths.push(0);
    memory.uses.push(0);
  }
  return tool;
}

function change(memory: MemoryState, record: RememberedRequest, sign: 1 | -1): void {
  const tools = record.tools.map((name) => numberOf(memory, name));
  for (const tool of tools) {
    const before = memory.uses[tool]!;
    memory.uses[tool] = before + sign;
    if (before === 0) memory.live += 1;
    else if (before + sign === 0) memory.live -= 1;
    memory.lengths[tool]! += sign * record.terms.length;
    memory.totalLength += sign * record.terms.length;
  }
  for (const term of record.terms) {
    let byTool = memory.counts.get(term);
    if (!byTool) {
      if (sign < 0) continue;
      byTool = new Map();
      memory.counts.set(term, byTool);
    }
    for (const tool of tools) {
      const times = (byTool.get(tool) ?? 0) + sign;
      if (times > 0) byTool.set(tool, times);
      else byTool.delete(tool);
    }
    if (byTool.size === 0) memory.counts.delete(term);
  }
  memory.averageLength = memory.live > 0 ? memory.totalLength / memory.live : 0;
}

/** Numbers the tools afresh once most numbers belong to tools no request uses any more, so they cannot pile up. */
function renumber(memory: MemoryState): void {
  if (memory.names.length <= 2 * memory.live + 64) return;
  const next = new Map<number, number>();
  const names: string[] = [];
  const lengths: number[] = [];
  const uses: number[] = [];
  memory.names.forEach((name, tool) => {
    if (memory.uses[tool]! <= 0) return;
    next.set(tool, names.length);
    names.push(name);
    lengths.push(memory.lengths[tool]!);
    uses.push(memory.uses[tool]!);
  });
  for (const [term, byTool] of memory.counts) {
    const renumbered = new Map<number, number>();
    for (const [tool, times] of byTool) {
      const to = next.get(tool);
      if (to !== undefined) renumbered.set(to, times);
    }
    memory.counts.set(term, renumbered);
  }
  memory.names = names;
  memory.lengths = lengths;
  memory.uses = uses;
  memory.numbers = new Map(names.map((name, tool) => [name, tool]));
  memory.epoch += 1;
}

/** Adds one already-trimmed request as the newest, forgetting the oldest when full. @internal */
export function rememberRequest(target: UsageMemory, record: RememberedRequest): void {
  const memory = target as unknown as MemoryState;
  if (memory.size >= memory.maxRequests) {
    const oldest = memory.ring[memory.head];
    if (oldest) change(memory, oldest, -1);
    memory.ring[memory.head] = record;
    memory.head = (memory.head + 1) % memory.maxRequests;
  } else {
    memory.ring[(memory.head + memory.size) % memory.maxRequests] = record;
    memory.size += 1;
  }
  change(memory, record, 1);
  renumber(memory);
  memory.revision += 1;
}

/**
 * Remembers that a request used these tools, as the newest of the memory's requests.
 *
 * The request is kept as its terms and the names as given, each once, so the next preselection
 * finds these tools by these words. A request with no words the index reads, or no tools, is
 * not recorded: what a request that needed no tool looks like is not something the words of
 * tools can learn. Over the cap the oldest request is forgotten. Never throws; answers whether
 * anything was recorded.
 *
 * @param memory - The memory to add to.
 * @param request - The request's text, usually the user's message.
 * @param used - The names of the tools the run dispatched (`result.used`).
 */
export function recordUsage(memory: UsageMemory, request: string, used: readonly string[]): boolean {
  if (!isUsageMemory(memory)) return false;
  const tools = rememberedTools(used);
  if (tools.length === 0) return false;
  const terms = rememberedTerms(request);
  if (terms.length === 0) return false;
  try {
    rememberRequest(memory, { terms, tools });
    return true;
  } catch {
    // Only an object dressed as a memory gets here; it is left as it is.
    return false;
  }
}

/** The memory's requests, oldest first. @internal */
export function rememberedRequests(memory: UsageMemory): RememberedRequest[] {
  if (!isUsageMemory(memory)) return [];
  const out: RememberedRequest[] = [];
  for (let i = 0; i < memory.size; i++) {
    const record = memory.ring[(memory.head + i) % memory.maxRequests];
    if (record) out.push(record);
  }
  return out;
}
