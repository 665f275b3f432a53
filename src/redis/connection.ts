/**
 * @module redis/connection
 * The backend's connections to the server: opened with a clear error when the server is not
 * there, reconnected with a short capped backoff once it was, and waited on while it is gone.
 */

import { createClient } from "redis";
import { RedisBackendError, redactUrl } from "./errors.js";
import type { RedisSettings } from "./options.js";

/** One connection to the server. */
export type RedisConnection = ReturnType<typeof createClient>;

/** Raw command replies, read the RESP2 way: strings, numbers, arrays and null. */
export type Reply = string | number | null | Reply[];

/**
 * Opens one connection. The first attempt either connects or fails with a
 * {@link RedisBackendError}; after that a lost connection is retried, waiting at most
 * `reconnectDelayMs` between attempts, until it is closed.
 */
export async function openConnection(settings: RedisSettings, role: string): Promise<RedisConnection> {
  const url = redactUrl(settings.url);
  let opened = false;
  let client: RedisConnection;
  try {
    client = createClient({
      url: settings.url,
      RESP: 2,
      disableOfflineQueue: true,
      socket: {
        connectTimeout: settings.connectTimeoutMs,
        reconnectStrategy: (retries: number, cause: Error) => (opened ? Math.min(25 * 2 ** Math.min(retries, 10), settings.reconnectDelayMs) : cause),
      },
    });
  } catch (error) {
    throw new RedisBackendError({ url, message: `The Redis URL ${url} could not be read: ${messageOf(error)}`, cause: error });
  }
  // Every failure is seen where it matters (a command's rejection, the waits below); an
  // unhandled 'error' event would end the process.
  client.on("error", () => undefined);
  try {
    await client.connect();
  } catch (error) {
    client.destroy();
    throw new RedisBackendError({ url, message: `Could not reach Redis at ${url} for the ${role} connection: ${messageOf(error)}`, cause: error });
  }
  opened = true;
  return client;
}

/** Sends one command as its raw arguments, its reply read the RESP2 way. */
export function send(client: RedisConnection, args: readonly string[]): Promise<Reply> {
  return client.sendCommand(args) as Promise<Reply>;
}

/** Resolves when the connection is ready again, or at once once `stop` has aborted. */
export function whenReady(client: RedisConnection, stop: AbortSignal): Promise<void> {
  if (client.isReady || stop.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      client.off("ready", done);
      stop.removeEventListener("abort", done);
      resolve();
    };
    client.on("ready", done);
    stop.addEventListener("abort", done, { once: true });
  });
}

/** Resolves after `ms`, or at once once `stop` has aborted; the timer never holds the process open. */
export function pause(ms: number, stop: AbortSignal): Promise<void> {
  if (stop.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stop.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref?.();
    stop.addEventListener("abort", done, { once: true });
  });
}

/** Closes a connection now, whatever state it is in; never throws. */
export function dropConnection(client: RedisConnection): void {
  try {
    client.destroy();
  } catch {
    // Already closed.
  }
}

/** The innermost message of an error chain worth showing, on one line. */
export function messageOf(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 4; depth += 1) {
    const cause = (current as { cause?: unknown } | null)?.cause;
    if (!(cause instanceof Error)) break;
    current = cause;
  }
  const inner = (current as { errors?: unknown } | null)?.errors;
  if (current instanceof Error && current.message === "" && Array.isArray(inner) && inner[0] instanceof Error) current = inner[0];
  const text = current instanceof Error ? current.message : String(current);
  return text.replace(/\s+/g, " ").trim() || "no reason given";
}
