/**
 * @module retry
 * The retry module's error for a request too big for the model's context window, whether the
 * guard weighed it before sending or the endpoint refused it. In a file of its own beside
 * text/retry, whose classifiers read it as an overflow and never retry it.
 */

import { AgentCoreError, brand, isErrorNamed, type AgentCoreErrorOptions } from "./error-base.js";

/** Where a context overflow was found: by the guard before sending, or by the endpoint. */
export type OverflowSource = "guard" | "endpoint";

/** Options for a {@link ContextOverflow}. */
export interface ContextOverflowOptions extends AgentCoreErrorOptions {
  /**
   * The window the request was weighed against, in tokens, where known: the endpoint's own
   * number where its refusal named one, otherwise the limit the guard or the caller used.
   */
  limit?: number | undefined;
  /** What the request came to (prompt plus the reply ceiling), in tokens, where known. */
  requested?: number | undefined;
  /** Who found out. @default "endpoint" */
  source?: OverflowSource | undefined;
  /** The endpoint's own wording, where it refused. */
  endpointMessage?: string | undefined;
}

/**
 * A request that does not fit the model's context window.
 *
 * Raised before sending when the opt-in guard weighs the request over its limit, and after
 * sending when the endpoint refuses with overflow wording; either way it carries the numbers
 * that are known and the endpoint's own words. `name` is `"AgentLoopOverflow"` on the subclass
 * runAgentLoop throws, and {@link ContextOverflow.is} recognises both.
 */
export class ContextOverflow extends AgentCoreError {
  override readonly name: "ContextOverflow" | "AgentLoopOverflow" = "ContextOverflow";
  /**
   * The window the request was weighed against, in tokens, where known: for an endpoint's
   * refusal that names its window (llama.cpp's `n_ctx`, the sentences of OpenAI, vLLM and the
   * others), the endpoint's number; otherwise the configured limit.
   */
  readonly limit?: number | undefined;
  /** The request's size, in tokens, where known: the endpoint's count where its refusal gave one, else the guard's estimate. */
  readonly requested?: number | undefined;
  /** Whether the guard or the endpoint found it. */
  readonly source: OverflowSource;
  /** The endpoint's own wording, where it refused. */
  readonly endpointMessage?: string | undefined;

  static {
    brand(this, "ContextOverflow");
  }

  /** Makes the error; the message says who found out and the numbers or words that are known. */
  constructor(options: ContextOverflowOptions = {}) {
    const source = options.source ?? "endpoint";
    super({
      message:
        options.message ??
        (source === "guard"
          ? `The request needs about ${options.requested} tokens, more than the ${options.limit}-token context window.`
          : `The endpoint refused the request as too long for the context window${options.endpointMessage ? `: ${options.endpointMessage}` : "."}`),
      cause: options.cause,
    });
    this.source = source;
    if (options.limit !== undefined) this.limit = options.limit;
    if (options.requested !== undefined) this.requested = options.requested;
    if (options.endpointMessage !== undefined) this.endpointMessage = options.endpointMessage;
  }

  /** Tells a ContextOverflow (an AgentLoopOverflow included) from anything else, also one from another copy of this package. */
  static override is(value: unknown): value is ContextOverflow {
    return isErrorNamed(value, "ContextOverflow") || isErrorNamed(value, "AgentLoopOverflow");
  }
}
