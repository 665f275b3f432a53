/**
 * @module @cubicecho/agent-core/redis
 * A backend on Redis for hosts that run several replicas: each run's events on a Redis Stream,
 * so a watcher on any replica replays and follows a run executing on another, and the learned
 * capability latches in one shared set broadcast over pub/sub, so a refusal learned on one
 * replica is known to all.
 *
 * Pass the backend to `createRuntime({ backend })`; the top-level functions and the default
 * runtime never touch it. Needs the official `redis` client (node-redis 5 or later), an optional
 * peer dependency of this package. docs/replicas.md says what is shared, what stays per
 * process, and how it behaves when the server goes away.
 */

export { createRedisBackend, type RedisBackend } from "./redis/backend.js";
export { RedisBackendError, type RedisBackendErrorOptions } from "./redis/errors.js";
export { REDIS_DEFAULTS, type RedisBackendOptions } from "./redis/options.js";
