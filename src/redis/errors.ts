/**
 * @module redis/errors
 * The error the Redis backend throws when it cannot start on its server, or cannot read it.
 */

import { AgentCoreError, type AgentCoreErrorOptions } from "../index.js";

/** Options for a {@link RedisBackendError}. */
export interface RedisBackendErrorOptions extends AgentCoreErrorOptions {
  /** The server's URL, its password left out. */
  url: string;
}

/**
 * The Redis backend could not do what it was asked: start on its server (which did not answer,
 * refused the connection or the credentials, or whose URL could not be read), or read a run's
 * history while the server was unreachable.
 *
 * The client's own error is the `cause`; `url` names the server without its password.
 */
export class RedisBackendError extends AgentCoreError {
  override readonly name = "RedisBackendError" as const;
  /** The server's URL, its password left out. */
  readonly url: string;

  static {
    AgentCoreError.mark(this, "RedisBackendError");
  }

  /** Makes the error; the message defaults to the server that could not be reached. */
  constructor(options: RedisBackendErrorOptions) {
    super({ message: options.message ?? `Could not start the Redis backend on ${options.url}.`, cause: options.cause });
    this.url = options.url;
  }

  /** Tells a RedisBackendError from anything else, also one from another copy of this package. */
  static override is(value: unknown): value is RedisBackendError {
    return AgentCoreError.isNamed(value, "RedisBackendError", "url");
  }
}

/** The URL with any password replaced by `***`, for messages and notices. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString().replace(/\/$/, "");
  } catch {
    return "(an unreadable URL)";
  }
}
