/**
 * @module bench/redis
 * Events per second from `emit` to a watcher that reads them: across two processes through
 * Redis (a replica process emits, this process watches the run through its own backend),
 * against the in-memory bus in one process.
 *
 * Each round emits 20,000 output events in bursts of 20, yielding to the event loop between
 * bursts as a streaming turn does, then `done`; the clock runs from the first emit until the
 * watcher has read `done`. The two sides alternate round by round and the medians are compared.
 * Skipped, with one line, where no redis-server binary is found.
 */
import { createRuntime, type RunEvent } from "../src/index.js";
import { createRedisBackend } from "../src/redis.js";
import { forkReplica } from "../test/support/redis-replicas.js";
import { redisBinary, startRedis } from "../test/support/redis-server.js";

const EVENTS = 20_000;
const BURST = 20;
const ROUNDS = 7;

async function readToDone(watcher: AsyncIterableIterator<RunEvent>): Promise<number> {
  let count = 0;
  for await (const event of watcher) {
    count += 1;
    if (event.kind === "done") break;
  }
  return count;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** Runs the bench and prints its table. */
export async function run(): Promise<void> {
  if (redisBinary() === undefined) {
    console.log("skipped: no redis-server binary (install Debian's redis-server, or set AGENT_CORE_REDIS_SERVER)");
    return;
  }
  const redis = await startRedis();
  const emitter = await forkReplica();
  const prefix = `bench-${process.pid}:`;
  const settings = { maxEvents: EVENTS + 10 };
  const backend = await createRedisBackend({ url: redis.url, prefix });
  try {
    // The buffer is sized for the whole run, so what is measured is the throughput, not the bound.
    await emitter.open({ url: redis.url, prefix, maxBufferedEvents: EVENTS * 2 }, settings);
    const watcher = createRuntime({ backend });
    const memory = createRuntime();
    watcher.configureEvents(settings);
    memory.configureEvents(settings);
    const times = { memory: [] as number[], redis: [] as number[] };
    for (let round = 0; round < ROUNDS + 1; round += 1) {
      const memoryRun = `memory-${round}`;
      const reading = readToDone(memory.watch(memoryRun));
      let start = performance.now();
      for (let sent = 0; sent < EVENTS;) {
        for (const end = Math.min(EVENTS, sent + BURST); sent < end; sent += 1) memory.emit(memoryRun, { kind: "output", text: `token ${sent} ` });
        await new Promise((resolve) => setImmediate(resolve));
      }
      memory.emit(memoryRun, { kind: "done", outcome: "answered" });
      const readInMemory = await reading;
      const memoryMs = performance.now() - start;
      memory.endRun(memoryRun);

      const redisRun = `redis-${round}`;
      const following = readToDone(watcher.watch(redisRun));
      start = performance.now();
      await emitter.stream(redisRun, EVENTS, BURST);
      const readThroughRedis = await following;
      const redisMs = performance.now() - start;
      if (readInMemory !== EVENTS + 1 || readThroughRedis !== EVENTS + 1)
        throw new Error(`a watcher read ${readInMemory} and ${readThroughRedis} of ${EVENTS + 1} events`);
      // The first round warms both sides up and is left out.
      if (round === 0) continue;
      times.memory.push(memoryMs);
      times.redis.push(redisMs);
    }
    const rate = (ms: number) => Math.round(((EVENTS + 1) / ms) * 1000);
    const memoryMs = median(times.memory);
    const redisMs = median(times.redis);
    console.log(`${EVENTS + 1} events a run in bursts of ${BURST}, median of ${ROUNDS} rounds each, alternating:\n`);
    console.log("| Bus | Median | Events per second | Against the in-memory bus |");
    console.log("| --- | ---: | ---: | ---: |");
    console.log(`| In memory, one process | ${memoryMs.toFixed(0)} ms | ${rate(memoryMs).toLocaleString("en")} | 1.00× |`);
    console.log(
      `| Redis Streams, emit in one process, watch in another | ${redisMs.toFixed(0)} ms | ${rate(redisMs).toLocaleString("en")} | ${(memoryMs / redisMs).toFixed(2)}× |`,
    );
    memory.reset();
    watcher.reset();
    await emitter.close();
  } finally {
    await backend.close();
    await emitter.exit();
    await redis.stop();
  }
}
