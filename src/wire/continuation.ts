/**
 * @module continuation
 * Carries on an answer the token ceiling cut off, by sending the transcript again with the answer
 * so far as a trailing assistant message (a prefill).
 *
 * llama.cpp renders such a message as the start of the reply, so the model resumes from its last
 * token and the prompt cache keeps the prompt and most of the answer; vLLM does so given
 * `continue_final_message: true` and `add_generation_prompt: false`, which are sent until the
 * model refuses them. A reply that repeats the answer so far before the new text (llama.cpp
 * streams the prefill back) has the repeat taken off. A server that ignores the message and
 * answers afresh, or refuses it with a 400 or 422, has the model's `assistantPrefill` latch
 * turned false, and the cut-off answer is kept.
 */

import type OpenAI from "openai";
import type { Turn, TurnTimings, TurnUsage } from "../shapes/config.js";
import { modelCapabilitiesOf, type EndpointCapabilities, type ModelCapabilities } from "./capabilities.js";
import { negotiate, NegotiationError } from "./negotiate.js";
import { EchoSieve, stripEcho } from "./continuation-echo.js";
import { applyCombinations } from "./refusal-combination.js";
import { describeError } from "../text/error-body.js";
import { isOverflow } from "../text/retry.js";
import { streamTurn, type StreamBody, type StreamTurnOptions } from "./stream.js";
import { notify } from "../text/safe-calls.js";

/** Options for {@link continueTurn}. */
export interface ContinueTurnOptions extends Pick<StreamTurnOptions, "signal" | "idleMs" | "firstChunkMs" | "onOutput" | "onThinking" | "fences" | "now"> {
  /** The model's name as the endpoint knows it, for its assistantPrefill latch. @default body.model */
  model?: string | undefined;
  /** The most continuation requests to send for this turn. @default 1 */
  maxContinuations?: number | undefined;
  /** Told a sentence when a continuation fails, is refused, or the model turns out not to continue. */
  onNotice?: ((message: string) => void) | undefined;
}

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
 * The request fields that ask a server to carry the trailing assistant message on rather than
 * answer after it (vLLM and llama.cpp read them); sent together or not at all, since llama.cpp
 * refuses `continue_final_message` beside its default `add_generation_prompt: true`.
 * @internal
 */
export const CONTINUATION_FIELDS: readonly string[] = Object.freeze(["continue_final_message", "add_generation_prompt"]);

/** The continuation request: the body, the answer so far on the end, and the two fields where the model takes them. */
function continuationBody(body: StreamBody, soFar: string, model: ModelCapabilities | undefined): StreamBody {
  const sent: StreamBody = { ...body, messages: [...body.messages, { role: "assistant", content: soFar }] };
  const dropped = model?.droppedFields ?? [];
  for (const field of CONTINUATION_FIELDS) delete sent[field];
  if (!CONTINUATION_FIELDS.some((field) => dropped.includes(field))) {
    sent.continue_final_message = true;
    sent.add_generation_prompt = false;
  }
  for (const field of dropped) if (field !== "model" && field !== "messages") delete sent[field];
  applyCombinations(sent, model);
  return sent;
}

/**
 * Carries on a turn the token ceiling cut off, and returns the pieces joined as one turn.
 *
 * Only an answer begun and cut off is continued: finishReason "length", some content, no tool
 * calls (their truncated arguments are reported where they are parsed). A turn cut off inside its
 * scratchpad has empty content and is returned as it is, and so is every turn of a model whose
 * `assistantPrefill` is latched false. Each continuation sends `body` again with the answer so
 * far as a trailing assistant message, and `continue_final_message: true` with
 * `add_generation_prompt: false` until the model refuses either (then neither, latched through
 * negotiate like any droppable field), up to `maxContinuations` times while the answer keeps
 * being cut off.
 *
 * A reply that begins by repeating the whole answer so far (llama.cpp streams the prefill back
 * before the new text) has the repeat taken off and is joined as new text. A 400 or 422 for the
 * continuation (other than an overflow), or a reply that repeats the answer's opening and then
 * starts it over, latches `assistantPrefill` false for the model; the output of such a restart
 * is held back from `onOutput` and the request is stopped as soon as it is recognised. On those
 * and on any other failure short of an aborted signal, the answer so far is returned with a
 * notice; an aborted signal rejects with its reason.
 *
 * @param client - The OpenAI client, usually from getClient.
 * @param supports - The endpoint's record, from capabilitiesFor.
 * @param body - The body the cut-off turn was answered for.
 * @param turn - The cut-off turn.
 * @param options - The model name, the cap, the callbacks and the watchdog.
 * @example
 * ```ts
 * // Keep the body runTurn sent: the build callback is handed the capabilities of each attempt.
 * let sent: RequestBody | undefined;
 * const build = (current: EndpointCapabilities, model?: ModelCapabilities) => (sent = buildBody(config, current, model, messages));
 * let turn = await runTurn(client, supports, build, { model: config.model });
 * if (turn.finishReason === "length" && sent) turn = await continueTurn(client, supports, sent, turn, { model: config.model, onOutput });
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
    const controller = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
    const onOutput = options.onOutput;
    const release = (text: string): void => {
      if (!onOutput || text === "") return;
      try {
        onOutput(text);
      } catch {
        // The caller's sink failing is not the continuation failing.
      }
    };
    let sieve = new EchoSieve(soFar);
    let released = "";
    let sent: StreamBody | undefined;
    let piece: Turn;
    try {
      piece = await negotiate(
        supports,
        (_current, produced, model) => {
          // Each attempt reads its reply afresh: a refused one showed nothing.
          sieve = new EchoSieve(soFar);
          released = "";
          sent = continuationBody(body, soFar, model);
          return streamTurn(client, sent, {
            produced,
            signal,
            ...(options.idleMs !== undefined ? { idleMs: options.idleMs } : {}),
            ...(options.firstChunkMs !== undefined ? { firstChunkMs: options.firstChunkMs } : {}),
            ...(options.onThinking ? { onThinking: options.onThinking } : {}),
            ...(options.fences ? { fences: options.fences } : {}),
            ...(options.now ? { now: options.now } : {}),
            onOutput: (text) => {
              const fresh = sieve.push(text);
              if (sieve.verdict === "restarted") {
                controller.abort(new StartedOver("the continuation started the answer over"));
                return;
              }
              released += fresh;
              release(fresh);
            },
          });
        },
        {
          ...(name !== "" ? { model: name } : {}),
          droppable: CONTINUATION_FIELDS,
          sentBody: () => sent,
          ...(options.onNotice ? { onNotice: options.onNotice } : {}),
        },
      );
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (controller.signal.aborted && controller.signal.reason instanceof StartedOver) {
        record.assistantPrefill = false;
        notify(
          options.onNotice,
          `Model ${name} started the answer over instead of continuing it; the answer cut off at the token ceiling is kept, and no continuation is tried for this model again.`,
        );
        return current;
      }
      const status = describeError(error).status;
      if ((status === 400 || status === 422) && !isOverflow(error) && !NegotiationError.is(error)) {
        record.assistantPrefill = false;
        notify(
          options.onNotice,
          `Model ${name} refused to continue a cut-off answer (${status}); the answer so far is kept, and no continuation is tried for this model again.`,
        );
      } else {
        notify(
          options.onNotice,
          `Continuing the cut-off answer failed (${error instanceof Error ? error.message : String(error)}); the answer so far is kept.`,
        );
      }
      return current;
    }
    const rest = sieve.end();
    if (sieve.verdict === "restarted") {
      record.assistantPrefill = false;
      notify(options.onNotice, `Model ${name} started the answer over instead of continuing it; the answer so far is kept.`);
      return current;
    }
    released += rest;
    release(rest);
    if (sieve.echoed) {
      const stripped = stripEcho(piece.content, soFar);
      piece = { ...piece, content: stripped !== piece.content ? stripped : released };
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
