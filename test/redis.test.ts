/**
 * The Redis backend across replicas: two (and three) separate Node processes, each a runtime on
 * its own backend, against one real redis-server this file starts and stops by its PID, and the
 * loopback endpoint in this process.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { fold, type RunEvent } from "../src/index.js";
import { startEndpoint, turn, type EndpointOptions, type EndpointServer } from "./support/endpoint.js";
import { forkReplica, type Replica } from "./support/redis-replicas.js";
import { describeRedis, startRedis, type RedisServer } from "./support/redis-server.js";

let redis: RedisServer;
let a: Replica;
let b: Replica;
let prefixes = 0;
/** A prefix of its own per test, so no test reads another's runs or latches. */
const freshPrefix = () => `replicas-${process.pid}-${++prefixes}:`;

beforeAll(async () => {
  [redis, a, b] = await Promise.all([startRedis(), forkReplica(), forkReplica()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.exit(), b?.exit()]);
  await redis?.stop();
});

/** Opens both replicas on a prefix of their own with the options given, with an endpoint for their runs, and closes both after. */
async function withReplicas(
  options: [{ maxBufferedEvents?: number }, { maxBufferedEvents?: number }],
  endpoint: EndpointOptions,
  body: (server: EndpointServer, prefix: string) => Promise<void>,
): Promise<void> {
  const server = await startEndpoint(endpoint);
  const prefix = freshPrefix();
  try {
    await Promise.all([a.open({ url: redis.url, prefix, ...options[0] }), b.open({ url: redis.url, prefix, ...options[1] })]);
    await body(server, prefix);
  } finally {
    // Closed already where the test got to its end; a test that failed part-way leaves nothing open for the next.
    await Promise.all([a.close(), b.close()]);
    await server.close();
  }
}

/** Says what is wrong with what a watcher read against what the run emitted, or nothing: each event once, in order, every gap told by one notice just before it. */
function readProblems(read: readonly RunEvent[], emitted: readonly RunEvent[]): string[] {
  const problems: string[] = [];
  const bySeq = new Map(emitted.map((event) => [event.seq, event]));
  let last = 0;
  let notices = 0;
  for (const event of read) {
    const gap = event.kind === "notice" && typeof event.dropped === "number" && JSON.stringify(event) !== JSON.stringify(bySeq.get(event.seq));
    if (gap) {
      notices += 1;
      if (event.seq - (event.dropped as number) !== last) problems.push(`a notice of ${event.dropped} at ${event.seq} after seq ${last}`);
      last = event.seq;
      continue;
    }
    if (event.seq !== last + 1) problems.push(`seq ${event.seq} after ${last} with no notice`);
    if (JSON.stringify(event) !== JSON.stringify(bySeq.get(event.seq))) problems.push(`seq ${event.seq} differs from what was emitted`);
    last = event.seq;
  }
  if (read.at(-1)?.kind !== "done") problems.push(`ends with ${read.at(-1)?.kind ?? "nothing"}, not done`);
  if (notices > 1) problems.push(`${notices} gap notices for one outage`);
  return problems;
}

describeRedis("two replicas on one Redis", () => {
  it("hands a watcher on B every event of a run on A, seq for seq and done included, for 50 concurrent runs over both", async () => {
    const answer = { ...turn({ content: "one two three four five six seven eight nine ten eleven twelve", pieces: 12 }), delayMs: 1 };
    await withReplicas([{}, {}], { respond: () => answer }, async (server) => {
      const ids = Array.from({ length: 50 }, (_, index) => `run-${index}`);
      const home = (index: number) => (index % 2 === 0 ? a : b);
      const away = (index: number) => (index % 2 === 0 ? b : a);
      // Each run is watched from the other replica before it starts, and read again there once it is over.
      await Promise.all(ids.map((id, index) => away(index).watch(id)));
      const runs = await Promise.all(ids.map((id, index) => home(index).run(id, server.baseUrl)));
      const watched = await Promise.all(ids.map((id, index) => away(index).watched(id)));
      await Promise.all(ids.map((id, index) => away(index).watch(id, { watchId: `${id}-late` })));
      const late = await Promise.all(ids.map((id, index) => away(index).watched(`${id}-late`)));

      ids.forEach((_, index) => {
        const emitted = runs[index]!.emitted;
        expect(emitted.length).toBeGreaterThan(12);
        expect(emitted.at(-1)).toMatchObject({ kind: "done", outcome: "answered" });
        expect(watched[index]).toEqual(emitted);
        expect(late[index]).toEqual(emitted);
      });
      expect(server.chatRequests()).toHaveLength(50);

      const read = await b.history("run-0");
      expect(read.local).toEqual([]);
      expect(read.shared).toEqual(runs[0]!.emitted);
      expect(read.folded).toEqual(fold(runs[0]!.emitted));

      for (const closed of await Promise.all([a.close(), b.close()])) {
        expect(closed.unhandled).toEqual([]);
        expect(closed.handles).toEqual([]);
      }
    });
  }, 120_000);

  it("learns a refusal once for every replica: B's next request leaves the refused field out, and a replica that starts later knows it before its first request", async () => {
    await withReplicas([{}, {}], { refuse: { fields: ["min_p"] }, respond: () => turn({ content: "Fine." }) }, async (server, prefix) => {
      const extraBody = { min_p: 0.05 };
      expect((await a.run("learn", server.baseUrl, { extraBody })).content).toBe("Fine.");
      // B hears of the latch by the broadcast alone, without a request of its own.
      const deadline = Date.now() + 5_000;
      while (JSON.stringify((await b.latches()).endpoints).includes("min_p") === false && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(server.chatBodies()).toHaveLength(2);
      expect((await b.run("use", server.baseUrl, { extraBody })).content).toBe("Fine.");
      // A starts over: a fresh backend and runtime, as after a restart, loading the shared set first.
      expect((await a.close()).unhandled).toEqual([]);
      await a.open({ url: redis.url, prefix });
      expect((await a.run("start", server.baseUrl, { extraBody })).content).toBe("Fine.");

      const bodies = server.chatBodies();
      expect(bodies).toHaveLength(4);
      expect(bodies[0]).toHaveProperty("min_p", 0.05);
      expect(server.chatRequests().filter((request) => request.refused !== undefined)).toHaveLength(1);
      for (const body of bodies.slice(1)) expect(body).not.toHaveProperty("min_p");
      for (const replica of [b, a]) {
        const { endpoints } = await replica.latches();
        expect(endpoints).toHaveLength(1);
        expect(endpoints[0]).toMatchObject({ baseUrl: server.baseUrl, key: "", models: { "loopback-model": { droppedFields: ["min_p"] } } });
      }
      for (const closed of await Promise.all([a.close(), b.close()])) expect(closed.unhandled).toEqual([]);
    });
  }, 60_000);

  it("shares a refusal learned under an API key between replicas given one keySalt, and not with one given another", async () => {
    const server = await startEndpoint({ refuse: { fields: ["min_p"] }, respond: () => turn({ content: "Fine." }) });
    const prefix = freshPrefix();
    const extraBody = { min_p: 0.05 };
    const apiKey = "sk-fleet-0123456789";
    try {
      await Promise.all([a.open({ url: redis.url, prefix, keySalt: "the fleet's salt" }), b.open({ url: redis.url, prefix, keySalt: "the fleet's salt" })]);
      expect((await a.run("keyed-learn", server.baseUrl, { extraBody, apiKey })).content).toBe("Fine.");
      const deadline = Date.now() + 5_000;
      while (JSON.stringify((await b.latches()).endpoints).includes("min_p") === false && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect((await b.run("keyed-use", server.baseUrl, { extraBody, apiKey })).content).toBe("Fine.");
      expect(server.chatRequests().filter((request) => request.refused !== undefined)).toHaveLength(1);
      const [learned] = (await b.latches()).endpoints;
      expect(learned?.key).toMatch(/^hmac:[0-9a-f]{8}:[0-9a-f]{32}$/);
      expect((await a.latches()).endpoints[0]?.key).toBe(learned?.key);

      // A replica on the same set under another runtime salt cannot match the shared fingerprint: it learns the refusal itself.
      expect((await b.close()).unhandled).toEqual([]);
      await b.open({ url: redis.url, prefix }, undefined, "another salt");
      expect((await b.run("keyed-other", server.baseUrl, { extraBody, apiKey })).content).toBe("Fine.");
      expect(server.chatRequests().filter((request) => request.refused !== undefined)).toHaveLength(2);
      expect((await b.latches()).endpoints[0]?.key).not.toBe(learned?.key);
      for (const closed of await Promise.all([a.close(), b.close()])) expect(closed.unhandled).toEqual([]);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await server.close();
    }
  }, 60_000);

  it("keeps every run going through two seconds without redis-server, and gives each watcher its events or one gap notice", async () => {
    const words = Array.from({ length: 40 }, (_, index) => `w${index}`).join(" ");
    const slow = { ...turn({ content: words, pieces: 40 }), delayMs: 80 };
    // A buffers only 30 events, so its runs lose some while the server is gone; B buffers them all.
    await withReplicas([{ maxBufferedEvents: 30 }, {}], { respond: () => slow }, async (server) => {
      const ids = Array.from({ length: 8 }, (_, index) => `slow-${index}`);
      const home = (index: number) => (index % 2 === 0 ? a : b);
      const away = (index: number) => (index % 2 === 0 ? b : a);
      await Promise.all(ids.map((id, index) => away(index).watch(id)));
      const running = Promise.all(ids.map((id, index) => home(index).run(id, server.baseUrl)));
      await new Promise((resolve) => setTimeout(resolve, 800));
      await redis.kill();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await redis.restart();
      const runs = await running;
      const watched = await Promise.all(ids.map((id, index) => away(index).watched(id)));

      ids.forEach((id, index) => {
        expect(runs[index]!.done, id).toMatchObject({ kind: "done", outcome: "answered" });
        expect(runs[index]!.content, id).toBe(words);
        expect(readProblems(watched[index]!, runs[index]!.emitted), id).toEqual([]);
      });
      // A's small buffer overflowed: its runs' watchers were told of the gap.
      const gaps = ids.filter((_, index) => index % 2 === 0).map((_, index) => watched[index * 2]!.filter((event) => event.kind === "notice").length);
      expect(gaps.some((count) => count === 1)).toBe(true);

      for (const closed of await Promise.all([a.close(), b.close()])) {
        expect(closed.unhandled).toEqual([]);
        expect(closed.handles).toEqual([]);
        expect(closed.notices.filter((text) => /is unreachable/.test(text))).toHaveLength(1);
        expect(closed.notices.filter((text) => /reachable again/.test(text))).toHaveLength(1);
      }
    });
  }, 120_000);
});
