/**
 * @module redis/backend
 * `createRedisBackend`: the three connections (commands, the pub/sub listener, the blocking
 * reader), the writer, the reader and the latch set over them, and what happens when the server
 * goes away and comes back.
 */

import { randomBytes, randomUUID } from "node:crypto";
import type { ReplayOptions, RunEvent, RunFollower, RuntimeBackend, SharedLatches } from "../index.js";
import { dropConnection, messageOf, openConnection, pause, send, type RedisConnection } from "./connection.js";
import { RedisBackendError, redactUrl } from "./errors.js";
import { EventReader } from "./event-reader.js";
import { EventWriter } from "./event-writer.js";
import { LatchStore } from "./latch-store.js";
import { keySaltKey, runKey, settingsOf, type RedisBackendOptions, type RedisSettings } from "./options.js";

/** A {@link RuntimeBackend} on one Redis server, for `createRuntime({ backend })`. */
export interface RedisBackend extends RuntimeBackend {
  /** What every key and channel of this backend starts with. */
  readonly prefix: string;
  /** Whether the command connection is up right now. */
  readonly connected: boolean;
  /** The key salt every runtime on this backend fingerprints API keys with: the `keySalt` option, or the one agreed through the server. */
  readonly keySalt: string;
  /**
   * Reads a run's stored events from Redis, oldest first, whichever replica emitted them: what
   * `history` answers for a run this replica holds, for any run; `fold` takes the result.
   *
   * Rejects with a {@link RedisBackendError} while the server cannot be reached.
   */
  history(runId: string, options?: ReplayOptions): Promise<RunEvent[]>;
  /**
   * Writes what is still buffered (waiting at most `closeTimeoutMs`), ends every watcher that
   * follows a run through this backend, and closes the connections; calling it again returns the
   * same promise.
   */
  close(): Promise<void>;
}

/** Reads the event out of one stream entry, or undefined for an end mark or a foreign entry. */
function eventOf(entry: unknown): RunEvent | undefined {
  if (!Array.isArray(entry) || !Array.isArray(entry[1])) return undefined;
  const values = entry[1] as unknown[];
  for (let index = 0; index + 1 < values.length; index += 2) {
    if (values[index] !== "e") continue;
    try {
      const event: RunEvent = JSON.parse(String(values[index + 1]));
      return event !== null && typeof event === "object" && typeof event.seq === "number" ? Object.freeze(event) : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The key salt stored on the server, storing a random one first where none is there yet. */
async function agreedKeySalt(commands: RedisConnection, prefix: string): Promise<string> {
  const key = keySaltKey(prefix);
  await send(commands, ["SET", key, randomBytes(32).toString("base64url"), "NX"]);
  const stored = await send(commands, ["GET", key]);
  if (typeof stored !== "string" || stored === "") throw new Error(`${key} holds no key salt`);
  return stored;
}

/** The backend over three open connections. */
function assemble(
  settings: RedisSettings,
  connections: { commands: RedisConnection; subscriber: RedisConnection; reader: RedisConnection },
  latches: LatchStore,
  instance: string,
  keySalt: string,
): RedisBackend {
  const { commands, subscriber, reader } = connections;
  const url = redactUrl(settings.url);
  const stop = new AbortController();
  const notice = (text: string) => {
    try {
      settings.onNotice?.(text);
    } catch {
      // A notice sink that throws must not stop the backend.
    }
  };
  const writer = new EventWriter(commands, settings, stop.signal, notice);
  const events = new EventReader(reader, commands, settings, stop.signal, instance);
  let lostAt: number | undefined;
  const lost = () => {
    if (lostAt !== undefined || commands.isReady || stop.signal.aborted) return;
    lostAt = Date.now();
    notice(
      `Redis at ${url} is unreachable; this replica keeps its runs going, holds up to ${settings.maxBufferedEvents} events to write when it is back, and keeps its latches locally meanwhile.`,
    );
  };
  commands.on("error", lost);
  commands.on("reconnecting", lost);
  // Every listener is added after the first connect, so 'ready' here is always a reconnect.
  commands.on("ready", () => {
    if (stop.signal.aborted) return;
    writer.kick();
    void latches.resync();
    if (lostAt === undefined) return;
    const seconds = ((Date.now() - lostAt) / 1000).toFixed(1);
    const dropped = writer.takeDropped();
    lostAt = undefined;
    notice(
      `Redis at ${url} is reachable again after ${seconds} s; ${dropped === 0 ? "no event was dropped" : `${dropped} event${dropped === 1 ? " was" : "s were"} dropped past the buffer, and their watchers are told of the gap`}.`,
    );
  });
  subscriber.on("ready", () => {
    if (!stop.signal.aborted) void latches.resync();
  });

  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    events.close();
    const timer = new AbortController();
    await Promise.race([Promise.all([writer.drained(), latches.flush()]), pause(settings.closeTimeoutMs, timer.signal)]);
    timer.abort();
    const left = writer.pending;
    if (left > 0) notice(`The Redis backend closed with ${left} event${left === 1 ? "" : "s"} not written to ${url}.`);
    stop.abort();
    if (commands.isReady) await send(commands, ["DEL", events.wakeStream]).catch(() => undefined);
    dropConnection(reader);
    dropConnection(subscriber);
    if (commands.isReady) await commands.close().catch(() => dropConnection(commands));
    else dropConnection(commands);
  };

  const backend: RedisBackend = {
    prefix: settings.prefix,
    keySalt,
    get connected() {
      return commands.isReady;
    },
    appendEvents(runId: string, batch: readonly RunEvent[], bus) {
      try {
        if (Array.isArray(batch) && batch.length > 0) writer.append(String(runId), batch, bus);
      } catch {
        // Never into emit.
      }
    },
    endRun(runId: string, bus) {
      try {
        writer.end(String(runId), bus);
      } catch {
        // Never into endRun.
      }
    },
    followRun(runId: string, after: number, follower: RunFollower) {
      try {
        return events.follow(String(runId), typeof after === "number" && Number.isFinite(after) ? after : 0, follower);
      } catch {
        follower.ended();
        return () => undefined;
      }
    },
    publishLatches(shared: SharedLatches) {
      try {
        latches.publish(shared);
      } catch {
        // Kept locally; shared again on the next reconnect's resync.
      }
    },
    loadLatches: () => latches.load(),
    onLatches: (listener) => latches.listen(listener),
    async history(runId: string, options: ReplayOptions = {}) {
      const after = typeof options?.after === "number" && Number.isFinite(options.after) ? Math.max(0, Math.floor(options.after)) : 0;
      let reply: unknown;
      try {
        reply = await send(commands, ["XRANGE", runKey(settings.prefix, String(runId)), `0-${after + 1}`, "+"]);
      } catch (error) {
        throw new RedisBackendError({
          url,
          message: `Could not read the history of run ${String(runId)} from Redis at ${url}: ${messageOf(error)}`,
          cause: error,
        });
      }
      const found: RunEvent[] = [];
      if (Array.isArray(reply))
        for (const entry of reply) {
          const event = eventOf(entry);
          if (event !== undefined) found.push(event);
        }
      return found;
    },
    close: () => (closing ??= close()),
  };
  return Object.freeze(backend);
}

/**
 * Connects to a Redis server and returns a backend for `createRuntime({ backend })`: run events
 * on one stream per run, the learned latches in one shared set, broadcast as they are added.
 *
 * It resolves once the three connections (commands, the pub/sub listener, the blocking reader)
 * are up and the shared latches are loaded, so a runtime created on it sends its first request
 * already knowing every refusal the other replicas learned. A server that cannot be reached, or
 * refuses the connection, rejects it with a {@link RedisBackendError} that names the server
 * (without its password). Once started, a lost server never fails a run: events wait in a
 * bounded buffer and latches stay local until it is back.
 *
 * @param options - The server's `url`, and the prefix, buffer, batch and timing settings.
 * @example
 * import { createRuntime } from "@cubicecho/agent-core";
 * import { createRedisBackend } from "@cubicecho/agent-core/redis";
 *
 * const backend = await createRedisBackend({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
 * const runtime = createRuntime({ backend });
 * // … runtime.runAgentLoop, runtime.emit, runtime.watch on every replica …
 * await backend.close();
 */
export async function createRedisBackend(options: RedisBackendOptions): Promise<RedisBackend> {
  if (options === null || typeof options !== "object" || typeof options.url !== "string" || options.url.trim() === "") {
    throw new TypeError("createRedisBackend needs { url }: the Redis server's URL, such as redis://127.0.0.1:6379.");
  }
  const settings = settingsOf(options);
  const url = redactUrl(settings.url);
  const opening = await Promise.allSettled([openConnection(settings, "commands"), openConnection(settings, "subscriber"), openConnection(settings, "reader")]);
  const opened = opening.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const failure = opening.find((result) => result.status === "rejected");
  if (failure !== undefined) {
    for (const connection of opened) dropConnection(connection);
    throw failure.reason;
  }
  const [commands, subscriber, reader] = opened as [RedisConnection, RedisConnection, RedisConnection];
  const instance = randomUUID();
  const latches = new LatchStore(commands, subscriber, settings, instance);
  let keySalt: string;
  try {
    await latches.start();
    keySalt = settings.keySalt ?? (await agreedKeySalt(commands, settings.prefix));
  } catch (error) {
    for (const connection of opened) dropConnection(connection);
    throw new RedisBackendError({ url, message: `Redis at ${url} answered, but the shared latches could not be read: ${messageOf(error)}`, cause: error });
  }
  return assemble(settings, { commands, subscriber, reader }, latches, instance, keySalt);
}
