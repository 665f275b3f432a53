/**
 * @module capabilities
 * The capabilities module's loop, in a file of its own beside wire/capabilities (the records):
 * {@link negotiate} sends a request, and while the server refuses something the request can do
 * without, flips the latch wire/refusal chose on the endpoint's or the model's record and sends it
 * again, rebuilt; {@link NegotiationError} when that cannot converge.
 */

import type { Produced } from "./stream.js";
import { decideRefusal } from "./refusal.js";
import { shareLatches } from "./latch-link.js";
import { modelCapabilitiesOf, type EndpointCapabilities, type ModelCapabilities } from "./capabilities.js";
import { isPlainRecord } from "../text/guards.js";
import { AgentCoreError, brand, isErrorNamed, type AgentCoreErrorOptions } from "../text/error-base.js";

/** Options for a {@link NegotiationError}. */
export interface NegotiationErrorOptions extends AgentCoreErrorOptions {
  /** What the server refused, in words. */
  refused: string;
  /** How many requests were sent, the refused ones included. */
  attempts: number;
}

/**
 * A negotiation that could not converge: the server refused again something already latched
 * off, refused a field the request did not carry, or kept refusing past the bound.
 *
 * The server's last refusal is the `cause`.
 */
export class NegotiationError extends AgentCoreError {
  override readonly name = "NegotiationError" as const;
  /** What the server refused, in words ("stream_options", "reasoning_effort none", …). */
  readonly refused: string;
  /** How many requests were sent, the refused ones included. */
  readonly attempts: number;

  static {
    brand(this, "NegotiationError");
  }

  /** Makes the error; the message defaults to what was refused and after how many requests. */
  constructor(options: NegotiationErrorOptions) {
    super({
      message:
        options.message ??
        `The negotiation gave up after ${options.attempts} request${options.attempts === 1 ? "" : "s"}; the endpoint refused ${options.refused}.`,
      cause: options.cause,
    });
    this.refused = options.refused;
    this.attempts = options.attempts;
  }

  /** Tells a NegotiationError from anything else, also one from another copy of this package. */
  static override is(value: unknown): value is NegotiationError {
    return isErrorNamed(value, "NegotiationError");
  }
}

/** Sends one attempt: builds the body from the records it is handed and streams it. */
export type NegotiateSend<T> = (supports: EndpointCapabilities, produced: Produced, model?: ModelCapabilities) => Promise<T>;

/** Options for {@link negotiate}. */
export interface NegotiateOptions {
  /** The model's name as the endpoint knows it; without it nothing model-level is latched. */
  model?: string | undefined;
  /** Top-level fields (extraBody keys) that may be dropped when the server refuses them by name. */
  droppable?: readonly string[] | undefined;
  /** The box the attempts report output in; pass one to read it afterwards. @default a fresh box */
  produced?: Produced | undefined;
  /** Told a sentence each time something is latched off. */
  onNotice?: ((message: string) => void) | undefined;
  /**
   * Returns the body the last attempt sent, where the caller keeps it; lets a refusal of a field
   * the request did not carry end at once rather than after a second refusal.
   */
  sentBody?: (() => unknown) | undefined;
  /**
   * Whether a refusal of tools as such (llama.cpp without --jinja, vLLM without auto tool choice,
   * an Ollama model without tool support) is answered by latching the model's `toolsInPrompt`, so
   * a body builder describes the tools in the system prompt; otherwise it reaches the caller.
   * @default false
   */
  toolsInPrompt?: boolean | undefined;
}

/** The most requests one negotiation sends before giving up. */
const MAX_ATTEMPTS = 16;

/**
 * Sends a request through `send` and re-sends it, rebuilt, for as long as the server refuses
 * something the request can do without and nothing has been produced.
 *
 * Endpoint latches: strict schemas (a strict refusal or a grammar the server could not build)
 * and `stream_options`. Model latches, only where `model` is given: a reasoning effort (the
 * refused rung is stepped over, to the cheapest value the server listed above it, or a rung up
 * {@link EFFORT_LADDER} where it listed none), a reasoning effort as such, `max_tokens` in favour
 * of `max_completion_tokens` (and back), a temperature that is not ours to pick,
 * `response_format`, and any field named in `droppable` (a nested name is dropped at its
 * top-level field). A field refused only beside tools (`reasoning_effort` on gpt-5.x) or only
 * without them (`parallel_tool_calls`) is latched on that combination instead, and left out only
 * of requests in that company (applyCombinations). Each latch is told to `onNotice`.
 *
 * Everything else reaches the caller as thrown: a refused value (a ceiling over the model's, a
 * temperature out of range), an invalid schema, a refused field nobody offered as droppable, an
 * overflow, a rate limit, and any failure after the attempt produced output. A refusal that
 * comes back after its latch, names a field the request did not send, or does not stop within 16
 * requests ends in a {@link NegotiationError}.
 *
 * @param supports - The endpoint's record, from capabilitiesFor.
 * @param send - Builds the body from the records it is handed and sends it; called once per attempt.
 * @param options - The model's name, droppable fields, the produced box and the notice sink.
 * @example
 * ```ts
 * const turn = await negotiate(
 *   capabilitiesFor(config.baseUrl, config.apiKey),
 *   (supports, produced, model) =>
 *     streamTurn(client, buildBody(config, supports, model, messages, tools), { produced }),
 *   { model: config.model, droppable: Object.keys(config.extraBody ?? {}) },
 * );
 * ```
 */
export async function negotiate<T>(supports: EndpointCapabilities, send: NegotiateSend<T>, options: NegotiateOptions = {}): Promise<T> {
  if (typeof supports !== "object" || supports === null) {
    throw new TypeError("negotiate needs the endpoint's record from capabilitiesFor as its first argument.");
  }
  if (typeof send !== "function") throw new TypeError("negotiate needs a send callback as its second argument.");
  const produced = options.produced ?? { value: false };
  const name = typeof options.model === "string" && options.model !== "" ? options.model : undefined;
  const droppable = Array.isArray(options.droppable) ? options.droppable.filter((field): field is string => typeof field === "string") : [];
  const flipped = new Set<string>();
  const raced = new Set<string>();
  for (let attempt = 1; ; attempt += 1) {
    shareLatches(supports);
    const model = name === undefined ? undefined : modelCapabilitiesOf(supports, name);
    try {
      return await send(supports, produced, model);
    } catch (error) {
      if (produced.value) throw error;
      let sent: Record<string, unknown> | undefined;
      try {
        const body = options.sentBody?.();
        sent = isPlainRecord(body) ? body : undefined;
      } catch {
        sent = undefined;
      }
      const decision = decideRefusal(error, supports, model, name ?? "", droppable, sent, { toolsInPrompt: options.toolsInPrompt === true });
      if (decision.kind === "pass") throw error;
      if (decision.kind === "stuck") throw new NegotiationError({ message: decision.message, refused: decision.refused, attempts: attempt, cause: error });
      // Another request on the same records latched this while ours was in flight: ours was built
      // before the latch, so it is sent again as it now reads, once per latch.
      const stale = decision.answers.every((answer) => answer.already && !flipped.has(answer.latch) && !raced.has(answer.latch));
      if (stale && attempt < MAX_ATTEMPTS) {
        for (const answer of decision.answers) raced.add(answer.latch);
        continue;
      }
      for (const answer of decision.answers) {
        if (answer.already || flipped.has(answer.latch)) {
          throw new NegotiationError({
            message: `The endpoint refused ${answer.what} again after it was latched off; the send callback must rebuild the body from the records it is handed.`,
            refused: answer.what,
            attempts: attempt,
            cause: error,
          });
        }
        if (sent !== undefined && answer.field !== undefined && !(answer.field in sent)) {
          throw new NegotiationError({
            message: `The endpoint refused ${answer.what}, which the request did not send.`,
            refused: answer.what,
            attempts: attempt,
            cause: error,
          });
        }
      }
      if (attempt >= MAX_ATTEMPTS) {
        throw new NegotiationError({
          message: `The endpoint was still refusing after ${attempt} requests.`,
          refused: decision.answers.map((answer) => answer.what).join(", "),
          attempts: attempt,
          cause: error,
        });
      }
      for (const answer of decision.answers) {
        answer.apply();
        flipped.add(answer.latch);
        try {
          options.onNotice?.(answer.notice);
        } catch {
          // A notice sink that throws must not stop the re-send.
        }
      }
    }
  }
}
