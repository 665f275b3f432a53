/**
 * @module stream
 * Reads one streamed chat completion back into a {@link Turn}.
 *
 * The request goes through the openai SDK client (base URL, key, headers, and the SDK's own
 * APIError for a refusal), but the event stream is read here: the raw response body is split
 * into server-sent events synchronously, one network chunk at a time, with one `JSON.parse` per
 * data line. Token callbacks fire as each chunk is read, tool calls are put back together by
 * index, fenced reasoning is taken out of the answer, and a watchdog turns an endpoint that has
 * gone quiet into {@link EndpointSilent}.
 */

import type OpenAI from "openai";
import { encodeStreamedBody, postsDirectly } from "./request-encoding.js";
import type { Turn } from "../shapes/config.js";
import { quoteGiven } from "../text/guards.js";
import { checkMessages } from "../text/message-check.js";
import { SseSplitter } from "./sse.js";
import { UnexpectedReply } from "./unexpected-reply.js";
import { TurnReader, type StreamTurnOptions } from "./turn-reader.js";
import { EndpointSilent } from "../text/endpoint-silent.js";
import { isRecord, positiveNumber } from "../text/guards.js";
import { AgentCoreError, brand, isErrorNamed, type AgentCoreErrorOptions } from "../text/error-base.js";

export { MalformedStreamEvent, StreamErrorEvent } from "./turn-reader.js";
export { readTimings, readUsage } from "./turn-usage.js";
export { UnexpectedReply, type UnexpectedReplyOptions } from "./unexpected-reply.js";
export type { MalformedStreamEventOptions, Produced, StreamTurnOptions } from "./turn-reader.js";

/** The longest delay a Node timer takes; anything longer fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** How long a server may keep the connection open after `[DONE]` before it is let go. */
const AFTER_DONE_MS = 100;

/** The body of a streamed chat completion: the model, the messages and whatever else the request carries. */
export type StreamBody = { model: string; messages: readonly unknown[] } & Record<string, unknown>;

/** Options for a {@link StreamInterrupted}. */
export interface StreamInterruptedOptions extends AgentCoreErrorOptions {
  /** Whether the attempt had shown text, reasoning or a tool call before the drop. */
  produced: boolean;
  /** How many stream events had been read before the drop. */
  events: number;
  /** The reply as read before the drop. */
  partial?: Turn;
}

/**
 * The stream stopped before the wire said the reply was whole.
 *
 * Raised when the socket drops in the middle of a reply (the transport's error is the `cause`),
 * and when a stream ends cleanly with neither a finish reason nor `[DONE]`, an empty one
 * included: what arrived is on `partial`, never an answer. It is a lost connection to every
 * classifier, so it is re-sent while nothing has been shown.
 */
export class StreamInterrupted extends AgentCoreError {
  override readonly name = "StreamInterrupted" as const;
  /** Whether the attempt had shown text, reasoning or a tool call before the drop. */
  readonly produced: boolean;
  /** How many stream events had been read before the drop. */
  readonly events: number;
  /** The reply as read before the drop (text, reasoning, tool calls so far); never an answer. */
  readonly partial?: Turn;

  static {
    brand(this, "StreamInterrupted");
  }

  /** Makes the error; the message says how many events had arrived. */
  constructor(options: StreamInterruptedOptions) {
    super({
      message: options.message ?? `The connection closed before the stream finished (after ${options.events} event${options.events === 1 ? "" : "s"}).`,
      cause: options.cause,
    });
    this.produced = options.produced;
    this.events = options.events;
    if (options.partial !== undefined) this.partial = options.partial;
  }

  /** Tells a StreamInterrupted from anything else, also one from another copy of this package. */
  static override is(value: unknown): value is StreamInterrupted {
    return isErrorNamed(value, "StreamInterrupted");
  }
}

/** A positive timer length, held to what a timer can wait; undefined for anything else. */
function positive(value: number | undefined): number | undefined {
  const milliseconds = positiveNumber(value);
  return milliseconds === undefined ? undefined : Math.min(milliseconds, MAX_TIMER_MS);
}

/** Waits for the first chunk that carries something, then for silence between chunks. */
class Watchdog {
  readonly #idleMs: number | undefined;
  readonly #firstChunkMs: number | undefined;
  readonly #onSilent: (error: EndpointSilent) => void;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #last = 0;
  /** Whether the idle clock is running (after the first chunk that carried something). */
  idle = false;

  constructor(idleMs: number | undefined, firstChunkMs: number | undefined, onSilent: (error: EndpointSilent) => void) {
    this.#idleMs = idleMs;
    this.#firstChunkMs = firstChunkMs;
    this.#onSilent = onSilent;
    if (firstChunkMs !== undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#onSilent(new EndpointSilent({ idleMs: firstChunkMs, phase: "first-chunk" }));
      }, firstChunkMs);
    }
  }

  /** Whether either allowance is set, so the SDK's own request timer must stay out of the way. */
  get armed(): boolean {
    return this.#idleMs !== undefined || this.#firstChunkMs !== undefined;
  }

  /** The reply has started: the first-chunk allowance is spent and the idle clock starts. */
  started(): void {
    this.stop();
    if (this.#idleMs === undefined) return;
    this.idle = true;
    this.#last = performance.now();
    this.#timer = setTimeout(this.#check, this.#idleMs);
  }

  /** A chunk arrived: the silence starts again from now. */
  touch(): void {
    this.#last = performance.now();
  }

  readonly #check = (): void => {
    this.#timer = undefined;
    const idleMs = this.#idleMs as number;
    const quiet = performance.now() - this.#last;
    if (quiet >= idleMs) {
      this.idle = false;
      this.#onSilent(new EndpointSilent({ idleMs, phase: "idle" }));
      return;
    }
    // Rearmed lazily: a chunk only stamps the time, and the timer sleeps out what is left.
    this.#timer = setTimeout(this.#check, Math.max(1, Math.ceil(idleMs - quiet)));
  };

  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.idle = false;
  }
}

/**
 * Says, on a 404 from the chat route, the full URL that was tried and, where the base URL has no
 * version segment such as `/v1`, that it likely needs one; any other error comes back as it was.
 */
function withRouteHint(error: unknown, baseUrl: string): unknown {
  if (!(error instanceof Error) || (error as { status?: unknown }).status !== 404) return error;
  const url = `${baseUrl.replace(/\/+$/, "")}/chat/completions`;
  let path = "";
  try {
    path = new URL(baseUrl).pathname;
  } catch {
    // A base URL the SDK took is a URL; nothing to add where it is not.
  }
  const hint =
    /\/v\d/.test(path) || /model/i.test(error.message)
      ? ""
      : ` The base URL has no /v1; most OpenAI-compatible servers serve the API under it: try ${baseUrl.replace(/\/+$/, "")}/v1.`;
  error.message = `${error.message} (POST ${url}).${hint}`;
  return error;
}

/** Refuses, with a TypeError naming the field and what was given, a turn that cannot be sent. */
function checkStreamInput(client: unknown, body: unknown): void {
  if (!client || typeof client !== "object") throw new TypeError(`streamTurn needs an OpenAI client (getClient(endpoint)); given ${quoteGiven(client)}.`);
  if (!body || typeof body !== "object") throw new TypeError(`streamTurn needs a request body ({ model, messages }); given ${quoteGiven(body)}.`);
  const { model, messages } = body as { model?: unknown; messages?: unknown };
  if (typeof model !== "string" || model.trim() === "")
    throw new TypeError(`config.model (the body's model) must name the model to ask, a non-empty string; given ${quoteGiven(model)}.`);
  checkMessages(messages, "messages (the body's messages)");
}

/**
 * Streams one chat completion and reads it back into a {@link Turn}.
 *
 * The request is made with `client` (so its base URL, key, headers and APIError for a refusal
 * all apply, and it is never retried here: re-sending is the caller's decision), `stream: true`
 * forced on the body. Answer text goes to `onOutput` and reasoning to `onThinking` as each
 * network chunk is read; reasoning arrives in `reasoning_content`, vLLM's `reasoning`, or fenced
 * inside content (see `fences`). Tool calls are put back together by index, their arguments
 * joined exactly as sent; a piece for an index never opened starts that call, a piece with no
 * index continues the last call unless it brings a new id, and a call that never got an id is
 * given one. `usage` and llama.cpp's `timings` are taken from the last chunk that carried them.
 *
 * With `idleMs` or `firstChunkMs` set, silence rejects with {@link EndpointSilent} and the SDK's
 * own request timer is switched off for the call. The turn is whole only when the wire says so:
 * a finish reason, `[DONE]`, or a JSON completion with a choice. A stream that ends without
 * either marker (an empty one included) or a dropped connection rejects with
 * {@link StreamInterrupted}; a data line that is not JSON with {@link MalformedStreamEvent}; an
 * error inside the stream (an `error` object in any chunk, a `finish_reason` of `"error"`) with
 * {@link StreamErrorEvent}, the SDK's APIError carrying the server's message and body; a reply
 * that is neither an event stream nor JSON, or JSON that is no completion, with
 * {@link UnexpectedReply}; an aborted `signal` with its reason. A failure after output carries
 * the reply so far as `partial`.
 * Whatever the outcome, the timers are cleared and the connection is released. A client that is
 * not an object, a body without `model` (config.model) or whose `messages` is not an array
 * rejects with a TypeError naming the field and what was given, before anything is sent.
 *
 * @param client - The OpenAI client to send with, usually from `getClient`.
 * @param body - The chat completion request; `stream: true` is set here.
 * @param options - Callbacks, the attempt's `produced` box, the signal and the watchdog.
 * @example
 * ```ts
 * const produced = { value: false };
 * const turn = await streamTurn(getClient(endpoint), { model, messages }, {
 *   produced,
 *   idleMs: timeoutMs(endpoint),
 *   firstChunkMs: firstTokenMs(endpoint),
 *   onOutput: (text) => process.stdout.write(text),
 * });
 * if (turn.finishReason === "length") console.warn("cut off at the token ceiling");
 * ```
 */
export async function streamTurn(client: OpenAI, body: StreamBody, options: StreamTurnOptions = {}): Promise<Turn> {
  checkStreamInput(client, body);
  const now = options.now ?? (() => performance.now());
  const signal = options.signal;
  if (signal?.aborted) throw signal.reason;
  const started = now();
  const controller = new AbortController();
  const failed: { failure?: { error: unknown } } = {};
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let afterDone: ReturnType<typeof setTimeout> | undefined;
  let finished = false;
  let doneSeen = (): boolean => false;

  const fail = (error: unknown): void => {
    if (failed.failure !== undefined || finished || doneSeen()) return;
    failed.failure = { error };
    controller.abort(error);
    reader?.cancel(error).catch(() => undefined);
  };
  /** Throws what stopped the turn on purpose (the watchdog, the signal), if anything did. */
  const stopped = (): void => {
    if (failed.failure !== undefined) throw failed.failure.error;
  };
  const onAbort = (): void => fail(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  const idleMs = positive(options.idleMs);
  const firstChunkMs = options.firstChunkMs !== undefined ? positive(options.firstChunkMs) : idleMs !== undefined ? positive(idleMs * 5) : undefined;
  const watchdog = new Watchdog(idleMs, firstChunkMs, fail);

  try {
    let response: Response;
    try {
      const requestOptions = { signal: controller.signal, maxRetries: 0, ...(watchdog.armed ? { timeout: MAX_TIMER_MS } : {}) };
      const written = postsDirectly(client) ? encodeStreamedBody(body) : undefined;
      response = await (
        written !== undefined
          ? client.post("/chat/completions", { ...requestOptions, body: written, headers: { "content-type": "application/json" }, stream: true })
          : client.chat.completions.create({ ...body, stream: true } as unknown as OpenAI.Chat.ChatCompletionCreateParamsStreaming, requestOptions)
      ).asResponse();
    } catch (error) {
      stopped();
      throw withRouteHint(error, client.baseURL);
    }
    if (failed.failure !== undefined) await response.body?.cancel().catch(() => undefined);
    stopped();
    const turn = new TurnReader(options, started, now, () => watchdog.started(), response.headers);
    doneSeen = () => turn.done;
    const type = response.headers.get("content-type") ?? "";
    /** Rejects a stream that ended before the wire said the reply was whole. */
    const cut = (): StreamInterrupted =>
      new StreamInterrupted({
        produced: turn.produced,
        events: turn.events,
        partial: turn.partial(now() - started),
        message:
          turn.events === 0
            ? `The stream from ${response.url} ended without a single event: an empty reply.`
            : `The stream from ${response.url} ended after ${turn.events} event${turn.events === 1 ? "" : "s"} with neither a finish reason nor [DONE]: the reply was cut off.`,
      });
    if (response.body === null) throw cut();
    const json = type.includes("json");
    if (!json && type !== "" && !type.includes("event-stream")) {
      const page = await response.text().catch(() => "");
      throw new UnexpectedReply({ status: response.status, contentType: type, url: response.url, body: page });
    }
    if (json) {
      // A server that ignored stream: true and answered the whole completion at once.
      const text = await response.text().catch((error: unknown) => {
        stopped();
        throw new StreamInterrupted({ produced: false, events: 0, cause: error });
      });
      stopped();
      if (text.trim() === "") throw cut();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        // A completion body that stops part way is a reply cut off, as a stream without its end is.
        const excerpt = text.length > 200 ? `${text.slice(0, 200)}…` : text;
        throw new StreamInterrupted({
          produced: false,
          events: 0,
          cause: error,
          message: `The completion body from ${response.url} is not whole JSON (cut off?): ${excerpt}`,
        });
      }
      if (isRecord(parsed)) turn.chunk(parsed);
      const choice = isRecord(parsed) && Array.isArray(parsed.choices) ? parsed.choices[0] : undefined;
      if (!isRecord(choice) || !isRecord(choice.message ?? choice.delta)) {
        throw new UnexpectedReply({ status: response.status, contentType: type, url: response.url, body: text });
      }
      return turn.finish(now() - started);
    }

    const splitter = new SseSplitter(turn.data, () => turn.endOfEvent());
    reader = response.body.getReader();
    let ended = false;
    while (!ended) {
      let read: ReadableStreamReadResult<Uint8Array>;
      try {
        read = await reader.read();
      } catch (error) {
        // Once [DONE] has arrived the turn is whole, whatever happens to the connection after.
        if (turn.done) break;
        stopped();
        throw new StreamInterrupted({ produced: turn.produced, events: turn.events, cause: error });
      }
      if (turn.done && read.done) break;
      stopped();
      if (read.done) {
        ended = true;
        splitter.end();
        turn.endOfEvent();
        break;
      }
      if (turn.done) continue;
      if (watchdog.idle) watchdog.touch();
      splitter.push(read.value);
      if (turn.done) {
        // Let the server finish the response so its connection goes back to the pool, but do
        // not wait on one that keeps it open.
        watchdog.stop();
        const open = reader;
        afterDone = setTimeout(() => open.cancel().catch(() => undefined), AFTER_DONE_MS);
      }
    }
    if (!turn.finished) throw cut();
    finished = true;
    return turn.finish(now() - started);
  } finally {
    finished = true;
    watchdog.stop();
    if (afterDone !== undefined) clearTimeout(afterDone);
    signal?.removeEventListener("abort", onAbort);
    if (reader !== undefined) {
      const open = reader;
      // Harmless on a stream that has ended; on one abandoned half way it closes the socket.
      open.cancel().catch(() => undefined);
    }
  }
}
