/**
 * @module run-turn
 * One turn with everything around it: the retry loop, around the negotiation, around the stream.
 *
 * {@link runTurn} sizes the request against an opt-in context limit before anything is sent,
 * waits for a server that is still loading the model, retries a transient failure for as long as
 * nothing has been produced, answers refusals through negotiate, turns an endpoint's overflow
 * refusal into a ContextOverflow, and calibrates the model's characters per token from the
 * prompt count every answered turn reports.
 */

import type OpenAI from "openai";
import type { Message, ToolDefinition, Turn } from "../shapes/config.js";
import { calibrateIn, charsPerTokenForIn } from "../wire/calibration.js";
import type { EndpointCapabilities, ModelCapabilities } from "../wire/capabilities.js";
import { negotiate } from "../wire/negotiate.js";
import { describeError } from "../text/error-body.js";
import { defaultState, type RuntimeState } from "../state/state.js";
import { backoffMs, isModelLoading, isOverflow, isTransient } from "../text/retry.js";
import { ContextOverflow } from "../text/context-overflow.js";
import { overflowNumbers } from "../text/overflow-numbers.js";
import { streamTurn, StreamErrorEvent, type Produced, type StreamBody, type StreamTurnOptions } from "../wire/stream.js";
import { messageChars, requestTokensOf } from "../text/tokens.js";
import { toolsJsonCharsIn } from "../wire/tools-cache.js";
import { notify } from "../text/safe-calls.js";
import { nonNegativeNumber, positiveNumber } from "../text/guards.js";

/**
 * Builds one attempt's body from the endpoint's record and the model's record (absent without
 * the `model` option), the same two records negotiate hands its send callback.
 */
export type BuildRequest = (supports: EndpointCapabilities, model?: ModelCapabilities) => StreamBody | Promise<StreamBody>;

/**
 * The options runTurn hands each attempt's stream as they came, listed once. The stream's `now`
 * is not among them: runTurn's clock times the loading wait, and the stream times the turn on
 * its own monotonic clock.
 */
const STREAM_OPTIONS = [
  "signal",
  "idleMs",
  "firstChunkMs",
  "onOutput",
  "onThinking",
  "onNotice",
  "fences",
  "startInReasoning",
] as const satisfies readonly (keyof StreamTurnOptions)[];

/** The part of runTurn's options that goes to each attempt's stream unchanged. */
type PassedToStream = Pick<StreamTurnOptions, (typeof STREAM_OPTIONS)[number]>;

/** Options for {@link runTurn}. */
export interface RunTurnOptions extends PassedToStream {
  /** The model's name as the endpoint knows it; without it nothing model-level is latched. */
  model?: string | undefined;
  /** Top-level fields (extraBody keys) negotiate may drop when the server refuses them by name. */
  droppable?: readonly string[] | undefined;
  /** Re-sends allowed for a transient failure before anything was produced. @default 2 */
  maxRetries?: number | undefined;
  /** The context window to weigh the request against before sending, in tokens; absent or 0 sends unweighed. */
  contextLimit?: number | undefined;
  /** How long to wait for a server still loading the model, in milliseconds; 0 turns the wait off. @default 120000 */
  loadingTimeoutMs?: number | undefined;
  /** How often to ask again while the model loads, in milliseconds. @default 3000 */
  loadingPollMs?: number | undefined;
  /** Told a sentence when something is latched off, a model is waited for, or a failure is retried. */
  onNotice?: ((message: string) => void) | undefined;
  /**
   * Whether a refusal of tools as such latches the model's `toolsInPrompt` (negotiate's option of
   * that name), so the build callback describes the tools in the prompt. @default false
   */
  toolsInPrompt?: boolean | undefined;
  /** Waits between attempts; resolves early or rejects when the signal aborts. @default a timer */
  sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
  /** The clock the loading wait is measured on, in milliseconds. @default Date.now */
  now?: (() => number) | undefined;
  /**
   * Asked, before an answered turn's prompt count calibrates the model, with that count and the
   * library's estimate of the same request; answering true (the server may have cut the prompt to
   * its window, so the count says nothing of the characters a token is worth) keeps the count
   * from being learned from.
   */
  checkPromptCount?: ((count: PromptCount) => boolean | Promise<boolean>) | undefined;
}

/** An answered turn's prompt as the endpoint counted it and as the library estimated it, in tokens. */
export interface PromptCount {
  /** The prompt tokens the endpoint reported. */
  reported: number;
  /** The library's estimate of the same request, at the model's calibrated characters per token. */
  estimate: number;
}

const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_LOADING_TIMEOUT_MS = 120_000;
const DEFAULT_LOADING_POLL_MS = 3_000;

function wait(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function ceilingOf(body: StreamBody): number {
  for (const field of ["max_completion_tokens", "max_tokens"]) {
    const value = positiveNumber(body[field]);
    if (value !== undefined) return value;
  }
  return 0;
}

/**
 * The characters of a body the way requestTokens counts them, and whether it carries an image;
 * the tool block's JSON length is read from the state's record of the tools it declared. @internal
 */
export function bodyChars(body: StreamBody, state: RuntimeState = defaultState): { chars: number; image: boolean } {
  let image = false;
  const tools = body.tools;
  // An unserialisable tool array is counted as nothing, as requestTokens counts it.
  let chars = Array.isArray(tools) && tools.length > 0 ? toolsJsonCharsIn(state, tools as ToolDefinition[]) : 0;
  for (const message of body.messages as readonly Message[]) {
    chars += messageChars(message);
    const content = (message as { content?: unknown } | null)?.content;
    if (Array.isArray(content) && content.some((part) => (part as { type?: unknown } | null)?.type === "image_url")) image = true;
  }
  return { chars, image };
}

/** The stream's options out of runTurn's: those in {@link STREAM_OPTIONS} that hold a value. */
function streamOptionsOf(options: RunTurnOptions): PassedToStream {
  const picked: Record<string, unknown> = {};
  for (const key of STREAM_OPTIONS) if (options[key] !== undefined && options[key] !== null) picked[key] = options[key];
  return picked as PassedToStream;
}

function shortMessage(error: unknown): string {
  // The SDK's message is the server's words behind the status ("400 request … exceeds …"): said once.
  const parts = describeError(error).message.split(" | ");
  const once = parts.filter((part) => !parts.some((other) => other !== part && /^\d{3} /.test(other) && other.slice(4) === part));
  const text = once.join(" | ").replace(/\s+/g, " ").trim();
  return text.length > 500 ? `${text.slice(0, 499)}…` : text;
}

/** {@link runTurn} on an explicit runtime state. @internal */
export async function runTurnIn(
  state: RuntimeState,
  client: OpenAI,
  supports: EndpointCapabilities,
  build: BuildRequest,
  options: RunTurnOptions = {},
): Promise<Turn> {
  if (!client || typeof client !== "object")
    throw new TypeError(`runTurn needs an OpenAI client (getClient(endpoint)) as its first argument; given ${client === null ? "null" : typeof client}.`);
  if (typeof build !== "function") throw new TypeError("runTurn needs a build callback as its third argument.");
  const sleep = options.sleep ?? wait;
  const now = options.now ?? Date.now;
  const signal = options.signal;
  const streamOptions = streamOptionsOf(options);
  const maxRetries = Math.floor(nonNegativeNumber(options.maxRetries) ?? DEFAULT_MAX_RETRIES);
  const loadingTimeoutMs = nonNegativeNumber(options.loadingTimeoutMs) ?? DEFAULT_LOADING_TIMEOUT_MS;
  const loadingPollMs = Math.max(1, nonNegativeNumber(options.loadingPollMs) ?? DEFAULT_LOADING_POLL_MS);
  const contextLimit = typeof options.contextLimit === "number" && options.contextLimit > 0 ? options.contextLimit : undefined;
  const modelOption = typeof options.model === "string" && options.model !== "" ? options.model : undefined;
  // Calibration keys on the model name, which the body carries even where the option is absent.
  let modelName = modelOption;
  let lastBody: StreamBody | undefined;
  let sized = false;

  const send = async (current: EndpointCapabilities, produced: Produced, model?: ModelCapabilities): Promise<Turn> => {
    lastBody = undefined;
    const body = await build(current, model);
    lastBody = body;
    modelName ??= typeof body?.model === "string" ? body.model : undefined;
    if (!sized) {
      sized = true;
      if (contextLimit !== undefined) {
        const charsPerToken = charsPerTokenForIn(state, current, modelName ?? "");
        const tools = Array.isArray(body?.tools) ? (body.tools as ToolDefinition[]) : undefined;
        const toolChars = tools && tools.length > 0 ? toolsJsonCharsIn(state, tools) : undefined;
        const prompt = requestTokensOf(body as unknown as Parameters<typeof requestTokensOf>[0], { charsPerToken }, toolChars);
        const requested = prompt + ceilingOf(body);
        if (requested > contextLimit) throw new ContextOverflow({ source: "guard", limit: contextLimit, requested });
      }
    }
    return streamTurn(client, body, { ...streamOptions, produced });
  };

  let retries = 0;
  let loadingSince: number | undefined;
  for (;;) {
    if (signal?.aborted) throw signal.reason;
    const produced: Produced = { value: false };
    try {
      const turn = await negotiate(supports, send, {
        ...(modelOption !== undefined ? { model: modelOption } : {}),
        ...(options.droppable ? { droppable: options.droppable } : {}),
        produced,
        ...(options.onNotice ? { onNotice: options.onNotice } : {}),
        ...(options.toolsInPrompt === true ? { toolsInPrompt: true } : {}),
        sentBody: () => lastBody,
      });
      if (lastBody && modelName !== undefined && turn.usage.prompt > 0) {
        const { chars, image } = bodyChars(lastBody, state);
        const estimate = Math.ceil(chars / charsPerTokenForIn(state, supports, modelName));
        const capped = options.checkPromptCount ? await options.checkPromptCount({ reported: turn.usage.prompt, estimate }) : false;
        if (capped !== true) calibrateIn(state, supports, modelName, chars, turn.usage.prompt, { image });
      }
      return turn;
    } catch (error) {
      if (signal?.aborted) throw error;
      if (ContextOverflow.is(error)) throw error;
      if (isOverflow(error)) {
        // The endpoint's own numbers, where its refusal names them, over the limit configured here.
        const told = overflowNumbers(error);
        const limit = told.limit ?? contextLimit;
        throw new ContextOverflow({
          source: "endpoint",
          endpointMessage: shortMessage(error),
          cause: error,
          ...(limit !== undefined ? { limit } : {}),
          ...(told.requested !== undefined ? { requested: told.requested } : {}),
        });
      }
      // Nothing is re-sent once the model has started answering, a server fault included: the
      // failure carries what was shown (`partial`) and the caller decides.
      if (produced.value) throw error;
      // Before any output a server fault inside the stream is re-sent like a lost connection.
      const faulted = StreamErrorEvent.is(error) && error.serverFault;
      if (loadingTimeoutMs > 0 && isModelLoading(error)) {
        const at = now();
        if (loadingSince === undefined) {
          loadingSince = at;
          notify(options.onNotice, `The endpoint is still loading ${modelName ?? "the model"}; waiting up to ${Math.round(loadingTimeoutMs / 1000)} s for it.`);
        }
        const left = loadingTimeoutMs - (at - loadingSince);
        if (left <= 0) throw error;
        await sleep(Math.min(loadingPollMs, left), signal);
        continue;
      }
      if (retries < maxRetries && (faulted || isTransient(error))) {
        const delay = backoffMs(retries, error);
        retries += 1;
        notify(
          options.onNotice,
          `The request failed (${shortMessage(error) || "no message"}); retry ${retries} of ${maxRetries} in ${Math.round(delay / 100) / 10} s.`,
        );
        await sleep(delay, signal);
        continue;
      }
      throw error;
    }
  }
}

/**
 * Runs one turn: builds the body, sends it, and answers what comes back until the turn is read
 * or the failure is the caller's.
 *
 * - A body whose `messages` is not a non-empty array of messages with known roles throws a
 *   TypeError naming `messages` and what was given, before any request.
 * - With `contextLimit`, the first body is weighed once (its prompt estimated with the model's
 *   calibrated characters per token, plus the reply ceiling under whichever spelling it
 *   carries) and a body over the limit throws ContextOverflow (source "guard") before any
 *   request.
 * - Refusals go through negotiate with `model` and `droppable`, rebuilding the body with
 *   `build(supports, model)` per attempt.
 * - A server still loading the model is asked again every `loadingPollMs` for up to
 *   `loadingTimeoutMs`, with one notice, without spending a retry.
 * - A transient failure (a dropped connection, a stream that stopped before it said it finished,
 *   an empty one, a silent endpoint, a rate limit, including the 429 that borrows overflow's
 *   words, in a status or inside the stream) is retried up to `maxRetries` times with backoff, and only
 *   while nothing was produced: once the model has started answering nothing is re-sent, a server
 *   fault inside the stream (a {@link StreamErrorEvent} with a 5xx code) included; the failure
 *   carries what was shown as `partial`.
 * - An endpoint's overflow refusal, in any family's words or inside a 200 stream, throws
 *   ContextOverflow with the endpoint's words and the original error as `cause`; its `limit` and
 *   `requested` are the endpoint's own numbers where the refusal names them (llama.cpp's `n_ctx`
 *   and `n_prompt_tokens`, the sentences of OpenAI, vLLM and the others), else `contextLimit`.
 *
 * Every answered turn that reports a prompt count calibrates the model's characters per token,
 * unless `checkPromptCount` says the count may have been cut by the server.
 *
 * @param client - The OpenAI client, usually from getClient.
 * @param supports - The endpoint's record, from capabilitiesFor.
 * @param build - Builds one attempt's body from the two records (buildBody fits).
 * @param options - The model, retry budget, context limit, loading wait, watchdog and callbacks.
 * @example
 * ```ts
 * const supports = capabilitiesFor(config.baseUrl, config.apiKey);
 * const turn = await runTurn(getClient(config), supports,
 *   (supports, model) => buildBody(config, supports, model, messages, tools), {
 *     model: config.model,
 *     droppable: Object.keys(config.extraBody ?? {}),
 *     contextLimit: await contextLimitFor(config, config.contextLength),
 *     onNotice: (text) => emit(runId, { kind: "notice", text }),
 *   });
 * ```
 */
export function runTurn(client: OpenAI, supports: EndpointCapabilities, build: BuildRequest, options?: RunTurnOptions): Promise<Turn> {
  return runTurnIn(defaultState, client, supports, build, options);
}
