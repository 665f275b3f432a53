/**
 * @module retry
 * The retry module's error for an endpoint that stopped sending, before the first chunk or in the
 * middle of a reply. In a file of its own beside text/retry: the stream's watchdog raises it and
 * the classifiers read it as worth another try.
 */

import { AgentCoreError, brand, isErrorNamed, type AgentCoreErrorOptions } from "./error-base.js";

/** Which wait an {@link EndpointSilent} ran out of. */
export type SilencePhase = "first-chunk" | "idle";

/** Options for an {@link EndpointSilent}. */
export interface EndpointSilentOptions extends AgentCoreErrorOptions {
  /** The allowance that ran out, in milliseconds. */
  idleMs: number;
  /** Whether the wait was for the first chunk or between chunks. @default "idle" */
  phase?: SilencePhase | undefined;
}

/**
 * An endpoint that stopped sending: no chunk within the idle allowance, or no first chunk within
 * the first-chunk allowance.
 */
export class EndpointSilent extends AgentCoreError {
  override readonly name = "EndpointSilent" as const;
  /** The allowance that ran out, in milliseconds. */
  readonly idleMs: number;
  /** Which wait ran out. */
  readonly phase: SilencePhase;

  static {
    brand(this, "EndpointSilent");
  }

  /** Makes the error; the message names the wait and its allowance. */
  constructor(options: EndpointSilentOptions) {
    const phase = options.phase ?? "idle";
    super({
      message:
        options.message ??
        (phase === "first-chunk"
          ? `The endpoint sent nothing within ${options.idleMs} ms of the request (first chunk).`
          : `The endpoint went silent for ${options.idleMs} ms in the middle of a reply.`),
      cause: options.cause,
    });
    this.idleMs = options.idleMs;
    this.phase = phase;
  }

  /** Tells an EndpointSilent from anything else, also one from another copy of this package. */
  static override is(value: unknown): value is EndpointSilent {
    return isErrorNamed(value, "EndpointSilent");
  }
}
