/**
 * One replica of a host, as a process of its own: a runtime on a Redis backend, driven over the
 * IPC channel by the test that forked it (test/support/redis-replicas.ts).
 *
 * It answers each request `{ id, op, ... }` with `{ id, ok, value }` or `{ id, ok: false,
 * error }`, and counts every unhandled rejection it sees, so the test can say there were none.
 */
import { createRuntime, fold, type Runtime, type RunEvent } from "../../src/index.js";
import { createRedisBackend, type RedisBackend, type RedisBackendOptions } from "../../src/redis.js";

interface Request {
  id: number;
  op: string;
  [field: string]: unknown;
}

const unhandled: string[] = [];
process.on("unhandledRejection", (reason) => unhandled.push(reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason)));

const notices: string[] = [];
const watches = new Map<string, Promise<RunEvent[]>>();
let backend: RedisBackend | undefined;
let runtime: Runtime | undefined;

function ready(): Runtime {
  if (runtime === undefined) throw new Error("the replica was not opened");
  return runtime;
}

/** Runs one agent loop against the test's endpoint, every event emitted on the runtime's bus. */
async function run(request: Request): Promise<unknown> {
  const runtime = ready();
  const runId = String(request.runId);
  const result = await runtime.runAgentLoop({
    config: {
      baseUrl: String(request.baseUrl),
      ...(typeof request.apiKey === "string" ? { apiKey: request.apiKey } : {}),
      model: String(request.model ?? "loopback-model"),
      maxRetries: 0,
      maxToolIterations: 4,
      ...(request.extraBody ? { extraBody: request.extraBody as Record<string, unknown> } : {}),
    },
    messages: [{ role: "user", content: String(request.question ?? "Say something.") }],
    dispatch: () => "ok",
    onEvent: (event) => runtime.emit(runId, event),
  });
  const emitted = runtime.history(runId);
  return { content: result.turn.content, done: emitted.at(-1), emitted };
}

/** Watches a run in the background; `watched` collects what it read. */
function watch(request: Request): string {
  const runtime = ready();
  const key = String(request.watchId ?? request.runId);
  const options = typeof request.after === "number" ? { after: request.after } : undefined;
  const reading = (async () => {
    const seen: RunEvent[] = [];
    for await (const event of runtime.watch(String(request.runId), undefined, options)) seen.push(event);
    return seen;
  })();
  watches.set(key, reading);
  return key;
}

async function handle(request: Request): Promise<unknown> {
  switch (request.op) {
    case "open": {
      backend = await createRedisBackend({ ...(request.options as RedisBackendOptions), onNotice: (text) => notices.push(text) });
      runtime = createRuntime({ backend, ...(typeof request.keySalt === "string" ? { keySalt: request.keySalt } : {}) });
      if (request.events) runtime.configureEvents(request.events as Record<string, number>);
      return { prefix: backend.prefix };
    }
    case "run":
      return run(request);
    case "emit": {
      const runtime = ready();
      const stamped = [];
      for (const event of request.events as Parameters<Runtime["emit"]>[1][]) stamped.push(runtime.emit(String(request.runId), event));
      return stamped;
    }
    case "stream": {
      // `count` output events in bursts of `burst`, yielding between bursts as a streaming turn does, then done.
      const runtime = ready();
      const runId = String(request.runId);
      const count = Number(request.count);
      const burst = Number(request.burst ?? 1);
      for (let sent = 0; sent < count;) {
        for (const end = Math.min(count, sent + burst); sent < end; sent += 1) runtime.emit(runId, { kind: "output", text: `token ${sent} ` });
        await new Promise((resolve) => setImmediate(resolve));
      }
      runtime.emit(runId, { kind: "done", outcome: "answered" });
      return count + 1;
    }
    case "watch":
      return watch(request);
    case "watched": {
      const reading = watches.get(String(request.watchId));
      if (reading === undefined) throw new Error(`no watch ${String(request.watchId)}`);
      return reading;
    }
    case "history": {
      const shared = await (backend as RedisBackend).history(String(request.runId));
      return { local: ready().history(String(request.runId)), shared, folded: fold(shared) };
    }
    case "latches":
      return ready().exportCapabilities();
    case "close": {
      runtime?.reset();
      await backend?.close();
      backend = undefined;
      runtime = undefined;
      watches.clear();
      // A handle closed by close() can take a turn or two to leave the list.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const handles = process.getActiveResourcesInfo().filter((kind) => kind !== "PipeWrap" && kind !== "TTYWrap");
      return { unhandled, notices: notices.splice(0), handles };
    }
    default:
      throw new Error(`unknown op ${request.op}`);
  }
}

process.on("message", (message: Request) => {
  handle(message).then(
    (value) => process.send?.({ id: message.id, ok: true, value }),
    (error: unknown) => process.send?.({ id: message.id, ok: false, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }),
  );
});
process.send?.({ id: 0, ok: true, value: "started" });
