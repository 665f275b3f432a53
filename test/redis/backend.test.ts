/**
 * createRedisBackend against a real redis-server this file starts and stops by its PID: how it
 * starts and fails to, the streams it writes (ids, cap, retention, end), the watchers it feeds,
 * and close. Two backends in this process stand for two replicas; test/redis.test.ts runs them
 * as separate processes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "redis";
import { AgentCoreError, createRuntime, negotiate, type Runtime, type RunEvent } from "../../src/index.js";
import { createRedisBackend, REDIS_DEFAULTS, RedisBackendError, type RedisBackend, type RedisBackendOptions } from "../../src/redis.js";
import { freePort } from "../support/llama-server.js";
import { describeRedis, startRedis, type RedisServer } from "../support/redis-server.js";

let redis: RedisServer;
let raw: ReturnType<typeof createClient>;
let prefixes = 0;

beforeAll(async () => {
  redis = await startRedis();
  raw = createClient({ url: redis.url });
  raw.on("error", () => undefined);
  await raw.connect();
}, 30_000);

afterAll(async () => {
  raw?.destroy();
  await redis?.stop();
});

/** Two replicas (a backend and a runtime each) on a prefix of their own, closed after `body`. */
async function withPair(
  body: (a: Runtime, b: Runtime, prefix: string, backends: [RedisBackend, RedisBackend]) => Promise<void>,
  options: Partial<RedisBackendOptions> = {},
): Promise<void> {
  const prefix = `backend-${process.pid}-${++prefixes}:`;
  const backends = await Promise.all([createRedisBackend({ url: redis.url, prefix, ...options }), createRedisBackend({ url: redis.url, prefix, ...options })]);
  const [a, b] = backends.map((backend) => createRuntime({ backend })) as [Runtime, Runtime];
  try {
    await body(a, b, prefix, backends);
  } finally {
    a.reset();
    b.reset();
    await Promise.all(backends.map((backend) => backend.close()));
  }
}

async function readAll(watcher: AsyncIterableIterator<RunEvent>): Promise<RunEvent[]> {
  const seen: RunEvent[] = [];
  for await (const event of watcher) seen.push(event);
  return seen;
}

/** Waits until `check` holds, a few milliseconds at a time, for at most two seconds. */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describeRedis("createRedisBackend", () => {
  describe("starting", () => {
    it("rejects with a RedisBackendError naming the server, without its password, when nothing listens", async () => {
      const port = await freePort();
      const error = await createRedisBackend({ url: `redis://user:secret@127.0.0.1:${port}`, connectTimeoutMs: 1_000 }).catch((caught: unknown) => caught);
      expect(RedisBackendError.is(error)).toBe(true);
      expect(AgentCoreError.is(error)).toBe(true);
      expect(error).toBeInstanceOf(RedisBackendError);
      const failure = error as RedisBackendError;
      expect(failure.url).toBe(`redis://user:***@127.0.0.1:${port}`);
      expect(failure.message).toMatch(new RegExp(`Could not reach Redis at redis://user:\\*\\*\\*@127\\.0\\.0\\.1:${port} .*ECONNREFUSED`));
      expect(failure.message).not.toMatch(/secret/);
      expect(failure.cause).toBeDefined();
    });

    it("rejects a URL it cannot read with a RedisBackendError, and a missing one with a TypeError", async () => {
      await expect(createRedisBackend({ url: "http://127.0.0.1:1" })).rejects.toSatisfy(RedisBackendError.is);
      await expect(createRedisBackend({ url: "" })).rejects.toThrow(TypeError);
      await expect(createRedisBackend(undefined as unknown as RedisBackendOptions)).rejects.toThrow(/needs \{ url \}/);
    });

    it("documents its defaults in one place", () => {
      expect(REDIS_DEFAULTS).toMatchObject({ prefix: "agent-core:", maxBufferedEvents: 10_000, reconnectDelayMs: 500 });
      expect(Object.isFrozen(REDIS_DEFAULTS)).toBe(true);
    });
  });

  describe("the run streams", () => {
    it("stores each event under the id 0-<seq>, one stream per run under the prefix, capped at maxEvents", async () => {
      await withPair(async (a, _b, prefix, [backend]) => {
        a.configureEvents({ maxEvents: 5 });
        for (let index = 1; index <= 8; index += 1) a.emit("capped", { kind: "output", text: `t${index}` });
        await until(async () => Number(await raw.sendCommand(["XLEN", `${prefix}run:capped`])) === 5);
        const entries = (await raw.sendCommand(["XRANGE", `${prefix}run:capped`, "-", "+"])) as [string, string[]][];
        expect(entries.map(([id]) => id)).toEqual(["0-4", "0-5", "0-6", "0-7", "0-8"]);
        expect(JSON.parse(entries[0]![1][1]!)).toEqual(a.history("capped")[3]);
        expect(await backend.history("capped", { after: 6 })).toEqual(a.history("capped", { after: 6 }));
      });
    });

    it("keeps a run's order through a burst emitted in one go", async () => {
      await withPair(async (a, b) => {
        a.configureEvents({ maxEvents: 5_000 });
        for (let index = 1; index <= 3_000; index += 1) a.emit("burst", { kind: "output", text: `t${index}` });
        a.emit("burst", { kind: "done" });
        const seen = await readAll(b.watch("burst"));
        expect(seen.map((event) => event.seq)).toEqual(Array.from({ length: 3_001 }, (_, index) => index + 1));
      });
    });

    it("gives a watcher behind the trimmed head the notice the in-memory bus gives", async () => {
      const memory = createRuntime();
      memory.configureEvents({ maxEvents: 5, trimSlack: 1 });
      await withPair(async (a, b, _prefix, [backend]) => {
        a.configureEvents({ maxEvents: 5 });
        for (const runtime of [memory, a]) {
          for (let index = 1; index <= 20; index += 1) runtime.emit("trimmed", { kind: "output", text: `t${index}` });
          runtime.emit("trimmed", { kind: "done" });
        }
        await until(async () => (await backend.history("trimmed")).at(-1)?.kind === "done");
        const [local, remote] = await Promise.all([readAll(memory.watch("trimmed")), readAll(b.watch("trimmed"))]);
        expect(remote.map((event) => event.seq)).toEqual([16, 17, 18, 19, 20, 21]);
        expect(remote.map(({ at: _at, ...rest }) => rest)).toEqual(local.map(({ at: _at, ...rest }) => rest));
      });
      memory.reset();
    });

    it("expires a run that has not ended after retainUnendedMs, and one that is done after retainMs", async () => {
      await withPair(async (a, _b, prefix) => {
        a.configureEvents({ retainMs: 4_000, retainUnendedMs: 60_000 });
        a.emit("kept", { kind: "output", text: "x" });
        await until(async () => Number(await raw.sendCommand(["PTTL", `${prefix}run:kept`])) > 4_000);
        a.emit("kept", { kind: "done" });
        await until(async () => {
          const ttl = Number(await raw.sendCommand(["PTTL", `${prefix}run:kept`]));
          return ttl > 0 && ttl <= 4_000;
        });
      });
    });

    it("ends a run for its watchers on every replica with endRun, empties its stream and expires it", async () => {
      await withPair(async (a, b, prefix) => {
        a.configureEvents({ retainMs: 3_000 });
        const reading = readAll(b.watch("ended"));
        a.emit("ended", { kind: "output", text: "one" });
        a.emit("ended", { kind: "output", text: "two" });
        await until(async () => Number(await raw.sendCommand(["XLEN", `${prefix}run:ended`])) === 2);
        expect(a.endRun("ended")).toBe(true);
        const seen = await reading;
        expect(seen.map((event) => event.seq)).toEqual([1, 2]);
        expect(await readAll(b.watch("ended"))).toEqual([]);
        const ttl = Number(await raw.sendCommand(["PTTL", `${prefix}run:ended`]));
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(3_000);
        expect(a.emit("ended", { kind: "output", text: "late" })).toBeUndefined();
      });
    });

    it("resumes a watcher after the seq it already has", async () => {
      await withPair(async (a, b) => {
        for (let index = 1; index <= 6; index += 1) a.emit("resumed", { kind: "output", text: `t${index}` });
        a.emit("resumed", { kind: "done" });
        expect((await readAll(b.watch("resumed", undefined, { after: 4 }))).map((event) => event.seq)).toEqual([5, 6, 7]);
      });
    });
  });

  describe("the shared latches", () => {
    it("applies a latch another replica learned as its broadcast arrives, and a runtime reset keeps it", async () => {
      await withPair(async (a, b) => {
        const supports = a.capabilitiesFor("http://127.0.0.1:9/v1", "key");
        supports.usageInStream = false;
        // Latched by hand, it is shared by the next negotiation on the endpoint.
        expect(await negotiate(supports, async () => "sent")).toBe("sent");
        await until(() => b.capabilitiesFor("http://127.0.0.1:9/v1", "key").usageInStream === false);
        b.reset();
        expect(b.capabilitiesFor("http://127.0.0.1:9/v1", "key").usageInStream).toBe(false);
        expect(b.capabilitiesFor("http://127.0.0.1:9/v1", "other key").usageInStream).toBe(true);
      });
    });

    it("agrees one key salt through the server, unless one is given, which stays out of Redis", async () => {
      await withPair(async (_a, _b, prefix, [first, second]) => {
        expect(first.keySalt).toBe(second.keySalt);
        expect(first.keySalt.length).toBeGreaterThanOrEqual(32);
        expect(await raw.sendCommand(["GET", `${prefix}key-salt`])).toBe(first.keySalt);
      });
      const prefix = `given-salt-${process.pid}:`;
      const backend = await createRedisBackend({ url: redis.url, prefix, keySalt: "given salt" });
      try {
        expect(backend.keySalt).toBe("given salt");
        expect(await raw.sendCommand(["EXISTS", `${prefix}key-salt`])).toBe(0);
        const runtime = createRuntime({ backend });
        const alone = createRuntime({ keySalt: "given salt" });
        runtime.capabilitiesFor("http://127.0.0.1:9/v1", "key").usageInStream = false;
        expect(alone.importCapabilities(runtime.exportCapabilities()).ignored).toEqual([]);
        runtime.reset();
      } finally {
        await backend.close();
      }
    });

    it("shares a latch between two runtimes on one backend too", async () => {
      const backend = await createRedisBackend({ url: redis.url, prefix: `one-backend-${process.pid}:` });
      const [first, second] = [createRuntime({ backend }), createRuntime({ backend })];
      try {
        const supports = first.capabilitiesFor("http://127.0.0.1:9/v1");
        supports.strictSchemas = false;
        await negotiate(supports, async () => "sent");
        await until(() => second.capabilitiesFor("http://127.0.0.1:9/v1").strictSchemas === false);
      } finally {
        first.reset();
        second.reset();
        await backend.close();
      }
    });
  });

  describe("close", () => {
    it("ends every watcher following a run through it, writes what it buffered, and can be called twice", async () => {
      const prefix = `close-${process.pid}:`;
      const backend = await createRedisBackend({ url: redis.url, prefix });
      const runtime = createRuntime({ backend });
      const waiting = runtime.watch("never").next();
      runtime.emit("written", { kind: "output", text: "last words" });
      const closing = backend.close();
      expect(backend.close()).toBe(closing);
      await closing;
      expect(await waiting).toEqual({ done: true, value: undefined });
      expect(backend.connected).toBe(false);
      expect(await raw.sendCommand(["XLEN", `${prefix}run:written`])).toBe(1);
      // Closed, the runtime goes on in memory.
      expect(runtime.emit("written", { kind: "done" })?.seq).toBe(2);
      runtime.reset();
    });
  });
});
