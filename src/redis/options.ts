/**
 * @module redis/options
 * What `createRedisBackend` takes, with its defaults in one place.
 */

/** Options for `createRedisBackend`. */
export interface RedisBackendOptions {
  /** The server, as node-redis reads it: `redis://[[user]:password@]host[:port][/db]`, or `rediss://` for TLS. */
  url: string;
  /**
   * Put in front of every key and channel the backend uses, so that several hosts (or tests)
   * can share one server without reading each other's runs.
   * @default "agent-core:"
   */
  prefix?: string | undefined;
  /**
   * The most events held in memory while Redis cannot be written to; past it the oldest are
   * dropped, and every watcher of their runs is told of the gap.
   * @default 10000
   */
  maxBufferedEvents?: number | undefined;
  /** The most events written in one round trip. @default 1000 */
  batchSize?: number | undefined;
  /** How long one blocking read of the followed runs waits on the server before it is sent again, in milliseconds. @default 5000 */
  blockMs?: number | undefined;
  /** How long the first connection may take before `createRedisBackend` gives up, in milliseconds. @default 5000 */
  connectTimeoutMs?: number | undefined;
  /** The longest wait between two attempts to reconnect after the server was lost, in milliseconds. @default 500 */
  reconnectDelayMs?: number | undefined;
  /** How long `close()` waits for buffered events and latches to be written, in milliseconds. @default 2000 */
  closeTimeoutMs?: number | undefined;
  /** Told a sentence when the server is lost, when it is back (with what was dropped meanwhile), and on close. */
  onNotice?: ((text: string) => void) | undefined;
  /**
   * The secret every runtime on this backend fingerprints API keys with, so that the replicas'
   * shared latches match each other's keys. Give it where the secret should stay out of Redis.
   * @default one agreed through the server: the first replica stores 32 random bytes under `<prefix>key-salt` and every later one reads it
   */
  keySalt?: string | undefined;
}

/** The options with every default applied. */
export type RedisSettings = Required<Omit<RedisBackendOptions, "onNotice" | "keySalt">> & Pick<RedisBackendOptions, "onNotice" | "keySalt">;

/** The defaults `createRedisBackend` applies to every option left out. */
export const REDIS_DEFAULTS = Object.freeze({
  prefix: "agent-core:",
  maxBufferedEvents: 10_000,
  batchSize: 1_000,
  blockMs: 5_000,
  connectTimeoutMs: 5_000,
  reconnectDelayMs: 500,
  closeTimeoutMs: 2_000,
}) satisfies Omit<RedisSettings, "url" | "onNotice" | "keySalt">;

/** A whole number of at least `least`, or the default where the option is not one. */
function whole(value: unknown, fallback: number, least = 1): number {
  return typeof value === "number" && Number.isFinite(value) && value >= least ? Math.floor(value) : fallback;
}

/** Reads the options, applying a default wherever one is absent or not usable. */
export function settingsOf(options: RedisBackendOptions): RedisSettings {
  return {
    url: options.url,
    prefix: typeof options.prefix === "string" ? options.prefix : REDIS_DEFAULTS.prefix,
    maxBufferedEvents: whole(options.maxBufferedEvents, REDIS_DEFAULTS.maxBufferedEvents),
    batchSize: whole(options.batchSize, REDIS_DEFAULTS.batchSize),
    blockMs: whole(options.blockMs, REDIS_DEFAULTS.blockMs, 10),
    connectTimeoutMs: whole(options.connectTimeoutMs, REDIS_DEFAULTS.connectTimeoutMs),
    reconnectDelayMs: whole(options.reconnectDelayMs, REDIS_DEFAULTS.reconnectDelayMs, 10),
    closeTimeoutMs: whole(options.closeTimeoutMs, REDIS_DEFAULTS.closeTimeoutMs, 0),
    onNotice: typeof options.onNotice === "function" ? options.onNotice : undefined,
    keySalt: typeof options.keySalt === "string" && options.keySalt !== "" ? options.keySalt : undefined,
  };
}

/** The Redis key the agreed key salt is stored under. */
export const keySaltKey = (prefix: string): string => `${prefix}key-salt`;

/** The Redis key of one run's stream. */
export const runKey = (prefix: string, runId: string): string => `${prefix}run:${runId}`;
