/**
 * @module usage-memory
 * A usage memory as a JSON blob a host stores, or hands to another replica, so a restarted
 * process ranks with what its runs already taught it.
 *
 * The blob holds what the memory holds and no more: each request's terms (never its text) and
 * the names of the tools it used, oldest first. Reading one back is bounded by the memory it goes
 * into: a blob's text longer than its cap allows is refused unread, only its newest `maxRequests`
 * requests are read, each held to the per-request caps, so a hostile or huge blob costs at most
 * linear time and leaves a memory no bigger than recording would.
 */

import { isPlainRecord } from "../text/guards.js";
import {
  isUsageMemory,
  rememberedRequests,
  rememberRequest,
  USAGE_MEMORY_MAX_TERMS,
  USAGE_MEMORY_MAX_TOOLS,
  USAGE_MEMORY_NAME_CHARACTERS,
  USAGE_MEMORY_TERM_CHARACTERS,
  type UsageMemory,
} from "./usage-memory.js";

/** The usage memory snapshot format's version; a blob of another version is ignored whole. */
export const USAGE_MEMORY_SNAPSHOT_VERSION = 1;

/** The longest blob text read per request the memory may keep, in characters; a longer text is refused unread. */
export const USAGE_MEMORY_BLOB_CHARACTERS_PER_REQUEST = 4_096;

/** The most reasons {@link importUsageMemory} lists; past it, one line says how many more there were. */
const MAX_REASONS = 100;

/** One remembered request as stored. */
export interface UsageMemorySnapshotRequest {
  /** Its distinct terms, as the keyword index reads them. */
  terms: string[];
  /** The names of the tools it used. */
  tools: string[];
}

/** A usage memory as JSON-able data: its requests, oldest first. */
export interface UsageMemorySnapshot {
  version: typeof USAGE_MEMORY_SNAPSHOT_VERSION;
  requests: UsageMemorySnapshotRequest[];
}

/** What {@link importUsageMemory} took from a blob and what it left out. */
export interface ImportUsageMemoryResult {
  /** Requests added to the memory. */
  requests: number;
  /** Where each ignored part was, with why (`requests[3]: no tools`), at most 100 lines. */
  ignored: string[];
}

/**
 * Returns a usage memory's requests as a JSON-able blob, oldest first, for a host to store or
 * share and hand to {@link importUsageMemory}.
 *
 * The blob holds terms and tool names only, never a request's text.
 *
 * @param memory - The memory to write out.
 * @example
 * await writeFile("usage.json", JSON.stringify(exportUsageMemory(memory)));
 */
export function exportUsageMemory(memory: UsageMemory): UsageMemorySnapshot {
  return {
    version: USAGE_MEMORY_SNAPSHOT_VERSION,
    requests: rememberedRequests(memory).map((record) => ({ terms: [...record.terms], tools: [...record.tools] })),
  };
}

const TERM = /^[\p{L}\p{N}]+$/u;

function termsIn(value: unknown, where: string, ignored: Reasons): string[] | undefined {
  if (!Array.isArray(value)) return void ignored.add(`${where}.terms: not an array`);
  const kept = new Set<string>();
  let dropped = 0;
  for (const term of value.slice(0, USAGE_MEMORY_MAX_TERMS * 2)) {
    if (kept.size >= USAGE_MEMORY_MAX_TERMS) break;
    if (typeof term === "string" && term.length > 0 && term.length <= USAGE_MEMORY_TERM_CHARACTERS && TERM.test(term) && term === term.toLowerCase())
      kept.add(term);
    else dropped += 1;
  }
  if (dropped > 0) ignored.add(`${where}.terms: ${dropped} not understood`);
  return [...kept];
}

function toolsIn(value: unknown, where: string, ignored: Reasons): string[] | undefined {
  if (!Array.isArray(value)) return void ignored.add(`${where}.tools: not an array`);
  const kept: string[] = [];
  let dropped = 0;
  for (const name of value.slice(0, USAGE_MEMORY_MAX_TOOLS * 2)) {
    if (kept.length >= USAGE_MEMORY_MAX_TOOLS) break;
    if (typeof name === "string" && name.length > 0 && name.length <= USAGE_MEMORY_NAME_CHARACTERS) {
      if (!kept.includes(name)) kept.push(name);
    } else dropped += 1;
  }
  if (dropped > 0) ignored.add(`${where}.tools: ${dropped} not understood`);
  return kept;
}

/** The reasons an import lists, held to a count. */
class Reasons {
  readonly lines: string[] = [];
  private more = 0;
  add(line: string): void {
    if (this.lines.length < MAX_REASONS) this.lines.push(line);
    else this.more += 1;
  }
  done(): string[] {
    return this.more > 0 ? [...this.lines, `(and ${this.more} more)`] : this.lines;
  }
}

/**
 * Adds the requests of a blob from {@link exportUsageMemory} to a usage memory, as its newest,
 * ignoring whatever it does not understand; never throws.
 *
 * The requests keep the blob's order, oldest first, after those the memory already holds; past
 * the memory's cap the oldest are forgotten, and of a blob holding more than the cap only its
 * newest `maxRequests` are read. A blob of another version, or one that is not an object (or its
 * JSON text), changes nothing; neither does a text longer than 4,096 characters per request the
 * memory may keep, which is refused unread. Each request is held to the caps recording holds it
 * to (32 terms, 8 tools), and one without terms or tools is left out. The result counts what
 * was added and lists what was left out.
 *
 * @param memory - The memory to add to.
 * @param blob - The stored blob, as an object or as its JSON text.
 */
export function importUsageMemory(memory: UsageMemory, blob: unknown): ImportUsageMemoryResult {
  const ignored = new Reasons();
  let added = 0;
  try {
    if (!isUsageMemory(memory)) {
      ignored.add("(memory): not a usage memory");
      return { requests: 0, ignored: ignored.done() };
    }
    let value = blob;
    if (typeof value === "string") {
      const limit = memory.maxRequests * USAGE_MEMORY_BLOB_CHARACTERS_PER_REQUEST;
      if (value.length > limit) {
        ignored.add(`(blob): ${value.length} characters, more than the ${limit} this memory reads`);
        return { requests: 0, ignored: ignored.done() };
      }
      try {
        value = JSON.parse(value);
      } catch {
        ignored.add("(blob): a string that is not JSON");
        return { requests: 0, ignored: ignored.done() };
      }
    }
    if (!isPlainRecord(value)) {
      ignored.add("(blob): not an object");
      return { requests: 0, ignored: ignored.done() };
    }
    if (value.version !== USAGE_MEMORY_SNAPSHOT_VERSION) {
      ignored.add(`(blob): version ${JSON.stringify(value.version) ?? "missing"} is not ${USAGE_MEMORY_SNAPSHOT_VERSION}`);
      return { requests: 0, ignored: ignored.done() };
    }
    const requests = value.requests;
    if (!Array.isArray(requests)) {
      ignored.add("requests: not an array");
      return { requests: 0, ignored: ignored.done() };
    }
    const first = Math.max(0, requests.length - memory.maxRequests);
    if (first > 0) ignored.add(`requests[0..${first - 1}]: older than the newest ${memory.maxRequests} this memory keeps`);
    for (let index = first; index < requests.length; index++) {
      const where = `requests[${index}]`;
      const entry: unknown = requests[index];
      if (!isPlainRecord(entry)) {
        ignored.add(`${where}: not an object`);
        continue;
      }
      const terms = termsIn(entry.terms, where, ignored);
      const tools = toolsIn(entry.tools, where, ignored);
      if (!terms || !tools) continue;
      if (terms.length === 0 || tools.length === 0) {
        ignored.add(`${where}: no ${terms.length === 0 ? "terms" : "tools"}`);
        continue;
      }
      rememberRequest(memory, { terms, tools });
      added += 1;
    }
  } catch (error) {
    ignored.add(`(blob): unreadable (${error instanceof Error ? error.message : String(error)})`);
  }
  return { requests: added, ignored: ignored.done() };
}
