/**
 * @module continuation
 * Carries on an answer the token ceiling cut off, by sending the transcript again with the answer
 * so far as a trailing assistant message (a prefill).
 *
 * llama.cpp renders such a message as the start of the reply, so the model resumes from its last
 * token and the prompt cache keeps the prompt and most of the answer. A server that ignores the
 * message answers afresh, and one that refuses it says so with a 400 or 422; either way the
 * model's `assistantPrefill` latch goes false and the cut-off answer is kept.
 */

import type OpenAI from "openai";
import type { Turn, TurnTimings, TurnUsage } from "../shapes/config.js";
import { modelCapabilitiesOf, type EndpointCapabilities } from "./capabilities.js";
import { describeError } from "../text/error-body.js";
import { isOverflow } from "../text/retry.js";
import { streamTurn, type Produced, type StreamBody, type StreamTurnOptions } from "./stream.js";
import { notify } from "../text/safe-calls.js";

/** Options for {@link continueTurn}. */
export interface ContinueTurnOptions
  extends Pick<StreamTurnOptions, "signal" | "idleMs" | "firstChunkMs" | "onOutput" | "onThinking" | "fences" | "now"> {
  /** The model's name as the endpoint knows it, for its assistantPrefill latch. @default body.model */
  model?: string;
  /** The most continuation requests to send for this turn. @default 1 */
  maxContinuations?: number;
  /** Told a sentence when a continuation fails, is refused, or the model turns out not to continue. */
  onNotice?: (message: string) => void;
}

/** How much of the answer so far a continuation must repeat, at its start, to count as starting over. */
const RESTART_PROBE = 64;

/**
 * Says whether a turn is one continueTurn would carry on: cut off at the ceiling with some answer
 * written, and no tool call.
 */
export function isContinuable(turn: Turn): boolean {
  return (
    turn?.finishReason === "length" &&
    typeof turn.content === "string" &&
    turn.content.trim() !== "" &&
    (!Array.isArray(turn.toolCalls) || turn.toolCalls.length === 0)
  );
}

function sumBoth(a: number | undefined, b: number | undefined): number | undefined {
  return a !== undefined && b !== undefined ? a + b : undefined;
}

function joinUsage(a: TurnUsage, b: TurnUsage): TurnUsage {
  const usage: TurnUsage = {
    prompt: a.prompt + b.prompt,
    completion: a.completion + b.completion,
    total: a.total + b.total,
    cached: a.cached + b.cached,
  };
  const uncached = sumBoth(a.uncached, b.uncached);
  if (uncached !== undefined) usage.uncached = uncached;
  const reasoningTokens = sumBoth(a.reasoningTokens, b.reasoningTokens);
  if (reasoningTokens !== undefined) usage.reasoningTokens = reasoningTokens;
  return usage;
}

function joinTimings(a: TurnTimings | undefined, b: TurnTimings | undefined): TurnTimings | undefined {
  if (!a || !b) return undefined;
  const out: TurnTimings = {};
  for (const key of Object.keys(a) as (keyof TurnTimings)[]) {
    const sum = sumBoth(a[key], b[key]);
    if (sum !== undefined) out[key] = sum;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * Joins a turn and the continuation that carried it on into one turn: content and reasoning
 * joined, token counts and timings summed, `continuations` counting the extra request, and a
 * field only one of the two reported left out.
 * @internal
 */
export function joinTurns(first: Turn, next: Turn): Turn {
  const reasoning = first.reasoning && next.reasoning ? `${first.reasoning}\n${next.reasoning}` : first.reasoning || next.reasoning;
  const joined: Turn = {
    content: first.content + next.content,
    toolCalls: next.toolCalls ?? [],
    usage: joinUsage(first.usage, next.usage),
    finishReason: next.finishReason,
    reasoning: reasoning ?? "",
    continuations: (first.continuations ?? 0) + (next.continuations ?? 0) + 1,
  };
  const timings = joinTimings(first.timings, next.timings);
  if (timings) joined.timings = timings;
  if (first.firstTokenMs !== undefined) joined.firstTokenMs = first.firstTokenMs;
  const duration = sumBoth(first.durationMs, next.durationMs);
  if (duration !== undefined) joined.durationMs = duration;
  return joined;
}

/** Marks the continuation this module stopped itself because the model started over. */
class StartedOver extends Error {
  override readonly name = "StartedOver";
}

/**
 * Carries on a turn the token ceiling cut off, and returns the pieces joined as one turn.
 *
 * Only an answer begun and cut off is continued: finishReason "length", some content, no tool
 * calls (their truncated arguments are reported where they are parsed). A turn cut off inside its
 * scratchpad has empty content and is returned as it is, and so is every turn of a model whose
 * `assistantPrefill` is latched false. Each continuation sends `body` again with the answer so
 * far as a trailing assistant message, up to `maxContinuations` times while the answer keeps
 * being cut off.
 *
 * A 400 or 422 for the continuation (other than an overflow), or a continuation that begins the
 * answer over word for word, latches `assistantPrefill` false for the model; the output of such a
 * restart is held back from `onOutput` and the request is stopped as soon as it is recognised.
 * On those and on any other failure short of an aborted signal, the answer so far is returned
 * with a notice; an aborted signal rejects with its reason.
 *
 * @param client - The OpenAI client, usually from getClient.
 * @param supports - The endpoint's record, from capabilitiesFor.
 * @param body - The body the cut-off turn was answered for.
 * @param turn - The cut-off turn.
 * @param options - The model name, the cap, the callbacks and the watchdog.
 * @example
 * ```ts
 * let turn = await runTurn(client, supports, build, { model });
 * if (turn.finishReason === "length") turn = await continueTurn(client, supports, body, turn, { model, onOutput });
 * ```
 */
export async function continueTurn(
  client: OpenAI,
  supports: EndpointCapabilities,
  body: StreamBody,
  turn: Turn,
  options: ContinueTurnOptions = {},
): Promise<Turn> {
  const cap = typeof options.maxContinuations === "number" && Number.isFinite(options.maxContinuations) ? Math.max(0, Math.floor(options.maxContinuations)) : 1;
  const name = typeof options.model === "string" && options.model !== "" ? options.model : typeof body?.model === "string" ? body.model : "";
  const record = modelCapabilitiesOf(supports, name);
  let current = turn;
  for (let spent = 0; spent < cap && isContinuable(current) && record.assistantPrefill; spent += 1) {
    const soFar = current.content;
    const probe = soFar.trimStart().slice(0, RESTART_PROBE);
    const controller = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
    let held = "";
    let deciding = probe.length > 0;
    const onOutput = options.onOutput;
    const release = (text: string): void => {
      if (!onOutput || text === "") return;
      try {
        onOutput(text);
      } catch {
        // The caller's sink failing is not the continuation failing.
      }
    };
    const produced: Produced = { value: false };
    let piece: Turn;
    try {
      piece = await streamTurn(client, { ...body, messages: [...body.messages, { role: "assistant", content: soFar }] }, {
        produced,
        signal,
        ...(options.idleMs !== undefined ? { idleMs: options.idleMs } : {}),
        ...(options.firstChunkMs !== undefined ? { firstChunkMs: options.firstChunkMs } : {}),
        ...(options.onThinking ? { onThinking: options.onThinking } : {}),
        ...(options.fences ? { fences: options.fences } : {}),
        ...(options.now ? { now: options.now } : {}),
        onOutput: (text) => {
          if (!deciding) return release(text);
          held += text;
          const start = held.trimStart();
          if (start.length >= probe.length) {
            if (start.startsWith(probe)) {
              controller.abort(new StartedOver("the continuation started the answer over"));
              return;
            }
            deciding = false;
            release(held);
          } else if (!probe.startsWith(start)) {
            deciding = false;
            release(held);
          }
        },
      });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (controller.signal.aborted && controller.signal.reason instanceof StartedOver) {
        record.assistantPrefill = false;
        notify(options.onNotice, `Model ${name} started the answer over instead of continuing it; the answer cut off at the token ceiling is kept, and no continuation is tried for this model again.`);
        return current;
      }
      const status = describeError(error).status;
      if ((status === 400 || status === 422) && !isOverflow(error)) {
        record.assistantPrefill = false;
        notify(options.onNotice, `Model ${name} refused to continue a cut-off answer (${status}); the answer so far is kept, and no continuation is tried for this model again.`);
      } else {
        notify(options.onNotice, `Continuing the cut-off answer failed (${error instanceof Error ? error.message : String(error)}); the answer so far is kept.`);
      }
      return current;
    }
    if (deciding) {
      // The whole continuation was shorter than the probe: a restart only if it repeats all of it.
      if (probe.length > 0 && held.trimStart() !== "" && held.trimStart().startsWith(probe)) {
        record.assistantPrefill = false;
        notify(options.onNotice, `Model ${name} started the answer over instead of continuing it; the answer so far is kept.`);
        return current;
      }
      release(held);
    }
    current = joinTurns(current, piece);
  }
  const extra = (current.continuations ?? 0) - (turn.continuations ?? 0);
  if (extra > 0) {
    const outcome = isContinuable(current) ? "is still cut off at the ceiling" : `ended with finish reason "${current.finishReason || "none"}"`;
    notify(options.onNotice, `Continued the cut-off answer by prefilling it (${extra} more request${extra === 1 ? "" : "s"}); it ${outcome}.`);
  }
  return current;
}
