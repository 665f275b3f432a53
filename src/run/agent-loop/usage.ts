/**
 * @module run/agent-loop/usage
 * The loop's accounting for one run: the totals so far, each turn's metrics with its cache
 * verdict, and the token ledger, all read off the request as first built for each step.
 */

import type { Message, ToolDefinition, Turn, TurnUsage } from "../../shapes/config.js";
import { recordRequest, type LedgerEntry, type LedgerRequest } from "../ledger.js";
import { contextTokensOf, tokensForChars, toolTokens } from "../../text/tokens.js";
import type { CacheBreakReason, RunTotals, TurnMetrics } from "../../shapes/event-types.js";
import { jsonKey } from "../../text/safe-calls.js";
import type { LedgerRequestPrint, SentRequestPrint } from "../run-state.js";
import { leadingSystem, ledgerFromPrint, printLedgerRequest, printSentRequest, reasonFromPrint } from "./usage-print.js";

/** A cache hit short of this share of the previous prompt is a broken cache. */
const CACHE_HOLDS = 0.9;

/** The parts of a request the accounting compares from one step to the next. */
export interface SentRequest {
  /** The messages as sent, leading system prompt and hook context included. */
  messages: readonly Message[];
  /** The tools as declared. */
  tools?: readonly ToolDefinition[] | undefined;
}

/** A step as the accounting is told it. */
export interface AccountedStep {
  /** The request as first built. */
  sent: SentRequest;
  /** The transcript the request was built from, in the numbering the ledger keeps. */
  transcript: readonly Message[];
  /** The system prompt the request led with, for the ledger's epoch. */
  system: string;
  /** The turn as it came back, continuations joined. */
  turn: Turn;
  /** The usage the first request of the turn reported, before any continuation. */
  first: TurnUsage;
  /** The model's calibrated characters per token. */
  charsPerToken: number;
  /** The characters of the sent tool block's JSON, where measured already; measured here where absent. */
  toolChars?: number;
}

/** Whether two arrays hold the same entries, one for one: then their JSON is the same too. */
function sameEntries(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a === b) return true;
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  for (let index = 0; index < a.length; index += 1) if (a[index] !== b[index]) return false;
  return true;
}

/**
 * Reads why a request's prompt cache could not hold, comparing it with the request before: the
 * tool block first, since a template renders it ahead of the rest, then the system prompt, then
 * the history; a request that only appended names no cause of its own.
 */
export function cacheBreakReason(previous: SentRequest, next: SentRequest): CacheBreakReason {
  if (!sameEntries(previous.tools ?? [], next.tools ?? []) && jsonKey(previous.tools ?? []) !== jsonKey(next.tools ?? [])) return "tools-changed";
  const before = leadingSystem(previous.messages);
  const after = leadingSystem(next.messages);
  if (jsonKey(before) !== jsonKey(after)) return "system-changed";
  if (next.messages.length < previous.messages.length) return "history-rewritten";
  for (let index = before.length; index < previous.messages.length; index += 1) {
    if (jsonKey(previous.messages[index]) !== jsonKey(next.messages[index])) return "history-rewritten";
  }
  return "none-known";
}

/** The run's usage as it accumulates, step by step. */
export interface UsageAccount {
  /** The run's totals so far. */
  readonly totals: RunTotals;
  /** The ledger so far. */
  readonly ledger: LedgerEntry[];
  /** The prompt the last request reported; absent before the first and where that request reported none. */
  readonly used: number | undefined;
  /** Every turn's metrics, in order. */
  readonly turns: TurnMetrics[];
  /** Adds a step and returns its turn's metrics. */
  record(step: AccountedStep): TurnMetrics;
  /** Moves the ledger onto a rewritten transcript. */
  replaceLedger(ledger: LedgerEntry[]): void;
  /** The last request sent and the one behind the ledger's last entry, as digests, for a paused run's state. */
  prints(): { sent?: SentRequestPrint; recorded?: LedgerRequestPrint };
}

/** What a paused run's state carries of its accounting, for the run that resumes it. */
export interface RestoredUsage {
  totals: RunTotals;
  /** The prompt the last request reported. */
  used?: number | undefined;
  /** The last request sent, as digests. */
  sent?: SentRequestPrint | undefined;
  /** The request behind the ledger's last entry, as digests. */
  recorded?: LedgerRequestPrint | undefined;
}

/**
 * Starts the accounting for a run, continuing the ledger a host passed back, and, for a resumed
 * run, the totals, the last prompt and the last requests' digests its state carried. @internal
 */
export function createUsageAccount(ledger: readonly LedgerEntry[] | undefined, restored?: RestoredUsage): UsageAccount {
  const totals: RunTotals = restored ? { ...restored.totals } : { prompt: 0, completion: 0, total: 0, cached: 0 };
  const turns: TurnMetrics[] = [];
  let entries: LedgerEntry[] = Array.isArray(ledger) ? ledger.slice() : [];
  let previous: { sent: SentRequest; prompt: number; completion: number } | undefined;
  let recorded: LedgerRequest | undefined;
  let used: number | undefined = restored?.used;
  // Whether any request of the run (a resumed run's included) has been served from a cache.
  let cacheSeen = (restored?.totals.cached ?? 0) > 0;
  // Stand in for previous and recorded until the resumed run has its own.
  let sentPrint = restored?.sent;
  let recordedPrint = restored?.recorded;
  return {
    totals,
    get ledger() {
      return entries;
    },
    get used() {
      return used;
    },
    turns,
    replaceLedger(next) {
      entries = next;
      recorded = undefined;
      recordedPrint = undefined;
    },
    prints() {
      const sent = previous ? printSentRequest(previous.sent, previous.prompt, previous.completion) : sentPrint;
      const last = recorded ? printLedgerRequest(recorded) : recordedPrint;
      return { ...(sent ? { sent } : {}), ...(last ? { recorded: last } : {}) };
    },
    record({ sent, transcript, system, turn, first, charsPerToken, toolChars }) {
      const usage = turn.usage;
      totals.prompt += usage.prompt;
      totals.completion += usage.completion;
      totals.total += usage.total;
      totals.cached += usage.cached;
      const metrics: TurnMetrics = {
        ...usage,
        finishReason: turn.finishReason,
        toolsDeclared: sent.tools?.length ?? 0,
        toolSchemaTokens: toolChars === undefined ? toolTokens(sent.tools, { charsPerToken }) : tokensForChars(toolChars, { charsPerToken }),
      };
      const before = previous ?? sentPrint;
      if (before && before.prompt > 0) {
        metrics.cacheExpected = before.prompt + before.completion;
        // Judged only once the endpoint has shown a cache holding something: a server with no
        // prefix cache reports 0 cached on every request, which is no break.
        if (first.uncached !== undefined && (cacheSeen || first.cached > 0)) {
          metrics.cacheBroken = first.cached < CACHE_HOLDS * before.prompt;
          if (metrics.cacheBroken) metrics.cacheBreakReason = previous ? cacheBreakReason(previous.sent, sent) : reasonFromPrint(sentPrint!, sent);
        }
      }
      sentPrint = undefined;
      if (first.cached > 0) cacheSeen = true;
      metrics.context = contextTokensOf(sent, { charsPerToken, ...(first.prompt > 0 ? { promptTokens: first.prompt } : {}) }, toolChars);
      if (turn.timings) metrics.timings = turn.timings;
      if (turn.firstTokenMs !== undefined) metrics.firstTokenMs = turn.firstTokenMs;
      if (turn.durationMs !== undefined) metrics.durationMs = turn.durationMs;
      turns.push(metrics);
      previous = { sent, prompt: first.prompt, completion: usage.completion };
      used = first.prompt > 0 ? first.prompt : undefined;
      const request: LedgerRequest = { messages: transcript, system, ...(sent.tools ? { tools: sent.tools } : {}) };
      const behind = recorded ?? (recordedPrint ? ledgerFromPrint(recordedPrint, request) : undefined);
      const next = recordRequest(entries, behind, {
        ...request,
        prompt: first.prompt,
        ...(first.uncached !== undefined ? { cached: first.cached } : {}),
      });
      if (next !== entries) {
        entries = next;
        recorded = request;
        recordedPrint = undefined;
      }
      return metrics;
    },
  };
}
