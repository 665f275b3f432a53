/**
 * @module run/agent-loop/usage-print
 * The accounting's last requests reduced to digests for a paused run's state, and read back by
 * the run that resumes it: the cache verdict of its first request, and the ledger epoch that
 * request continues.
 */

import { createHash } from "node:crypto";
import type { Message, ToolDefinition } from "../../shapes/config.js";
import type { CacheBreakReason } from "../../shapes/event-types.js";
import { jsonKey } from "../../text/safe-calls.js";
import type { LedgerRequest } from "../ledger.js";
import type { LedgerRequestPrint, SentRequestPrint } from "../run-state.js";

/** A request's messages and tools, as the accounting compares them. */
interface Compared {
  messages: readonly Message[];
  tools?: readonly ToolDefinition[] | undefined;
}

/** The leading system and developer messages of a request. */
export function leadingSystem(messages: readonly Message[]): Message[] {
  const head: Message[] = [];
  for (const message of messages) {
    const role = (message as { role?: unknown } | undefined)?.role;
    if (role !== "system" && role !== "developer") break;
    head.push(message);
  }
  return head;
}

/** The sha256 of a value's JSON text, 32 hex digits. */
function digestOf(value: unknown): string {
  return createHash("sha256")
    .update(typeof value === "string" ? value : jsonKey(value))
    .digest("hex")
    .slice(0, 32);
}

/** A request as sent, with what it reported, as digests. */
export function printSentRequest(sent: Compared, prompt: number, completion: number): SentRequestPrint {
  const head = leadingSystem(sent.messages);
  return {
    messages: sent.messages.length,
    head: head.length,
    system: digestOf(head),
    history: digestOf(sent.messages.slice(head.length)),
    tools: digestOf(sent.tools ?? []),
    prompt,
    completion,
  };
}

/** The request behind the ledger's last entry, as digests. */
export function printLedgerRequest(request: LedgerRequest): LedgerRequestPrint {
  return {
    messages: request.messages.length,
    transcript: digestOf(request.messages),
    system: digestOf(request.system ?? ""),
    tools: digestOf(request.tools ?? []),
  };
}

/** Why the cache could not hold, read against the digests of the request before; as cacheBreakReason reads it. */
export function reasonFromPrint(previous: SentRequestPrint, next: Compared): CacheBreakReason {
  if (digestOf(next.tools ?? []) !== previous.tools) return "tools-changed";
  const head = leadingSystem(next.messages);
  if (digestOf(head) !== previous.system) return "system-changed";
  if (next.messages.length < previous.messages) return "history-rewritten";
  if (digestOf(next.messages.slice(head.length, previous.messages)) !== previous.history) return "history-rewritten";
  return "none-known";
}

/**
 * The request behind the ledger's last entry, rebuilt from its digests where the next request
 * still begins with it (same system prompt, same tools, the same messages first); undefined
 * where it does not, which starts a new epoch.
 */
export function ledgerFromPrint(print: LedgerRequestPrint, next: LedgerRequest): LedgerRequest | undefined {
  const messages = next.messages.slice(0, print.messages);
  if (messages.length !== print.messages || digestOf(messages) !== print.transcript) return undefined;
  if (digestOf(next.system ?? "") !== print.system || digestOf(next.tools ?? []) !== print.tools) return undefined;
  return { messages, ...(next.system !== undefined ? { system: next.system } : {}), ...(next.tools ? { tools: next.tools } : {}) };
}
