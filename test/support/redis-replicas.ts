/**
 * Forks replicas of a host for the Redis backend's tests: each a Node process of its own
 * running test/support/redis-replica.ts through tsx, driven by request and answer over IPC.
 */
import { fork, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import type { RunEvent } from "../../src/index.js";
import type { RedisBackendOptions } from "../../src/redis.js";

const SCRIPT = resolve(import.meta.dirname, "redis-replica.ts");

/** What a replica's agent-loop run handed back. */
export interface ReplicaRun {
  content: string;
  done: RunEvent | undefined;
  /** The run's events as this replica's bus holds them. */
  emitted: RunEvent[];
}

/** What a replica says as it closes. */
export interface ReplicaClosed {
  unhandled: string[];
  notices: string[];
  /** Handles still open after its backend closed (the IPC pipe left out). */
  handles: string[];
}

/** A replica process. */
export interface Replica {
  readonly pid: number;
  /** Creates the backend and the runtime on it. */
  open(options: RedisBackendOptions, events?: Record<string, number>, keySalt?: string): Promise<void>;
  /** Runs an agent loop against an endpoint, emitting its events under `runId`. */
  run(runId: string, baseUrl: string, extra?: { extraBody?: Record<string, unknown>; question?: string; apiKey?: string }): Promise<ReplicaRun>;
  /** Emits events under `runId` and answers what the bus stamped. */
  emit(runId: string, events: readonly Record<string, unknown>[]): Promise<(RunEvent | undefined)[]>;
  /** Emits `count` output events under `runId` in bursts of `burst`, yielding between bursts, then `done`. */
  stream(runId: string, count: number, burst: number): Promise<number>;
  /** Starts watching `runId` in the background. */
  watch(runId: string, options?: { after?: number; watchId?: string }): Promise<string>;
  /** What a watch read, once it finished. */
  watched(watchId: string): Promise<RunEvent[]>;
  /** The run's local history, the backend's, and the backend's folded. */
  history(runId: string): Promise<{ local: RunEvent[]; shared: RunEvent[]; folded: RunEvent[] }>;
  /** The runtime's latches as a snapshot. */
  latches(): Promise<{ endpoints: Array<Record<string, unknown>> }>;
  /** Closes the backend and reports what the process saw. */
  close(): Promise<ReplicaClosed>;
  /** Ends the process. */
  exit(): Promise<void>;
}

/** Forks one replica and waits until it is listening. */
export async function forkReplica(): Promise<Replica> {
  const child: ChildProcess = fork(SCRIPT, [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let next = 1;
  const started = new Promise<void>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`the replica exited (${code}) before it started`)));
    child.on("message", (message: { id: number; ok: boolean; value?: unknown; error?: string }) => {
      if (message.id === 0) return resolve();
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      if (message.ok) waiter?.resolve(message.value);
      else waiter?.reject(new Error(message.error));
    });
  });
  child.on("exit", () => {
    for (const waiter of pending.values()) waiter.reject(new Error("the replica exited"));
    pending.clear();
  });
  await started;
  const ask = <T>(op: string, fields: Record<string, unknown> = {}): Promise<T> =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      child.send({ id, op, ...fields });
    });
  const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", () => resolve())));
  return {
    pid: child.pid ?? -1,
    open: (options, events, keySalt) => ask("open", { options, events, keySalt }),
    run: (runId, baseUrl, extra = {}) => ask("run", { runId, baseUrl, ...extra }),
    emit: (runId, events) => ask("emit", { runId, events }),
    stream: (runId, count, burst) => ask("stream", { runId, count, burst }),
    watch: (runId, options = {}) => ask("watch", { runId, ...options }),
    watched: (watchId) => ask("watched", { watchId }),
    history: (runId) => ask("history", { runId }),
    latches: () => ask("latches"),
    close: () => ask("close"),
    async exit() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
