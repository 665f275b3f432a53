/**
 * The Redis backend when its server goes away: the runs go on, events wait in a bounded buffer
 * and are written when the server is back, each watcher is told of a gap once, the host hears
 * one notice per outage, and nothing rejects unhandled. The server is killed (SIGKILL) and
 * restarted by this file, which has it to itself.
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { createClient } from "redis";
import { createRuntime, type RunEvent } from "../../src/index.js";
import { createRedisBackend, RedisBackendError } from "../../src/redis.js";
import { describeRedis, startRedis, type RedisServer } from "../support/redis-server.js";

let redis: RedisServer;
let prefixes = 0;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  redis = await startRedis();
  process.on("unhandledRejection", onUnhandled);
}, 30_000);

afterAll(async () => {
  process.off("unhandledRejection", onUnhandled);
  await redis?.stop();
});

beforeEach(() => {
  unhandled.length = 0;
});

afterEach(() => {
  expect(unhandled).toEqual([]);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await sleep(10);
  }
}

describeRedis("the Redis backend without its server", () => {
  it("buffers at most maxBufferedEvents while the server is gone, writes them when it is back, and says so once each way", async () => {
    const prefix = `faults-${++prefixes}:`;
    const notices: string[] = [];
    const backend = await createRedisBackend({ url: redis.url, prefix, maxBufferedEvents: 10, onNotice: (text) => notices.push(text) });
    const reader = await createRedisBackend({ url: redis.url, prefix });
    const emitter = createRuntime({ backend });
    const watcher = createRuntime({ backend: reader });
    const seen: RunEvent[] = [];
    const reading = (async () => {
      for await (const event of watcher.watch("through")) seen.push(event);
    })();
    try {
      emitter.emit("through", { kind: "output", text: "before" });
      await until(() => seen.length === 1);
      await redis.kill();
      await until(() => !backend.connected);
      for (let index = 2; index <= 30; index += 1) expect(emitter.emit("through", { kind: "output", text: `t${index}` })?.seq).toBe(index);
      await expect(backend.history("through")).rejects.toSatisfy(RedisBackendError.is);
      await sleep(300);
      await redis.restart();
      await until(() => backend.connected && notices.length === 2);
      emitter.emit("through", { kind: "done" });
      await reading;
      expect(seen.map((event) => (event.kind === "notice" ? `gap ${event.dropped} at ${event.seq}` : event.seq))).toEqual([
        1,
        "gap 19 at 20",
        ...Array.from({ length: 11 }, (_, index) => index + 21),
      ]);
      expect(notices[0]).toMatch(/^Redis at redis:\/\/127\.0\.0\.1:\d+ is unreachable; .* holds up to 10 events/);
      expect(notices[1]).toMatch(/is reachable again after \d+\.\d s; 19 events were dropped past the buffer/);
      expect(emitter.history("through")).toHaveLength(31);
    } finally {
      emitter.reset();
      watcher.reset();
      await Promise.all([backend.close(), reader.close()]);
    }
  }, 30_000);

  it("shares a latch learned while the server was gone once it is back, also with a server that restarted empty, and broadcasts again after", async () => {
    const prefix = `faults-${++prefixes}:`;
    const [first, second] = await Promise.all([createRedisBackend({ url: redis.url, prefix }), createRedisBackend({ url: redis.url, prefix })]);
    const [a, b] = [createRuntime({ backend: first }), createRuntime({ backend: second })];
    const raw = createClient({ url: redis.url });
    raw.on("error", () => undefined);
    try {
      a.capabilitiesFor("http://127.0.0.1:9/v1").strictSchemas = false;
      await redis.kill();
      await until(() => !first.connected);
      first.publishLatches({ version: 1, endpoints: [{ baseUrl: "http://127.0.0.1:9/v1", key: "", strictSchemas: false }] });
      await redis.restart();
      await until(() => b.capabilitiesFor("http://127.0.0.1:9/v1").strictSchemas === false);
      await raw.connect();
      expect(await raw.sendCommand(["SMEMBERS", `${prefix}latches:v1`])).toEqual(['{"baseUrl":"http://127.0.0.1:9/v1","key":"","strictSchemas":false}']);
      // The broadcast works again too: a latch learned after the outage reaches B without one.
      await until(() => first.connected && second.connected);
      await until(
        async () => JSON.stringify(await raw.sendCommand(["PUBSUB", "NUMSUB", `${prefix}latches:v1`])) === JSON.stringify([`${prefix}latches:v1`, 2]),
      );
      first.publishLatches({ version: 1, endpoints: [{ baseUrl: "http://127.0.0.1:9/v1", key: "", usageInStream: false }] });
      await until(() => b.capabilitiesFor("http://127.0.0.1:9/v1").usageInStream === false);
    } finally {
      raw.destroy();
      a.reset();
      b.reset();
      await Promise.all([first.close(), second.close()]);
    }
  }, 30_000);

  it("closes within closeTimeoutMs while the server is gone, saying how many events were not written, and leaves nothing open", async () => {
    const notices: string[] = [];
    const backend = await createRedisBackend({ url: redis.url, prefix: `faults-${++prefixes}:`, closeTimeoutMs: 200, onNotice: (text) => notices.push(text) });
    const runtime = createRuntime({ backend });
    const waiting = runtime.watch("elsewhere").next();
    await redis.kill();
    await until(() => !backend.connected);
    runtime.emit("stranded", { kind: "output", text: "x" });
    const started = Date.now();
    await backend.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(notices.at(-1)).toMatch(/closed with 1 event not written/);
    expect(await waiting).toEqual({ done: true, value: undefined });
    runtime.reset();
    await redis.restart();
  }, 30_000);

  it("tells a write the server refuses once, and writes the other runs' events", async () => {
    const prefix = `faults-${++prefixes}:`;
    const raw = createClient({ url: redis.url });
    raw.on("error", () => undefined);
    await raw.connect();
    await raw.sendCommand(["SET", `${prefix}run:clash`, "a string"]);
    const notices: string[] = [];
    const backend = await createRedisBackend({ url: redis.url, prefix, onNotice: (text) => notices.push(text) });
    const runtime = createRuntime({ backend });
    try {
      runtime.emit("clash", { kind: "output", text: "x" });
      runtime.emit("clash", { kind: "output", text: "y" });
      runtime.emit("fine", { kind: "done" });
      await until(async () => (await backend.history("fine")).length === 1);
      await until(() => notices.length > 0);
      await sleep(50);
      // Refused again, told no more: the run behind it in the same batch is the mark that it was sent.
      runtime.emit("clash", { kind: "done" });
      runtime.emit("after", { kind: "done" });
      await until(async () => (await backend.history("after")).length === 1);
      expect(await raw.sendCommand(["GET", `${prefix}run:clash`])).toBe("a string");
      expect(notices).toHaveLength(1);
      expect(notices[0]).toMatch(new RegExp(`Redis refused to store run events under ${prefix}run:clash \\(WRONGTYPE`));
    } finally {
      raw.destroy();
      runtime.reset();
      await backend.close();
    }
  });
});
