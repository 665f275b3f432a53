/**
 * Watching a run through the runtime's backend: the run another replica holds, replayed and
 * followed, with the in-memory watcher's cap and gap notices. Runs on the in-memory shared
 * backend; test/redis.test.ts holds the same promises against a real Redis.
 */
import { describe, expect, it } from "vitest";
import { createRuntime, type RunEvent } from "../../src/index.js";
import { sharedHub } from "../support/shared-backend.js";

/** Reads a watcher to its end. */
async function readAll(watcher: AsyncIterableIterator<RunEvent>): Promise<RunEvent[]> {
  const seen: RunEvent[] = [];
  for await (const event of watcher) seen.push(event);
  return seen;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("watch on a runtime with a backend", () => {
  it("replays a run another replica holds from its start, then follows it until done", async () => {
    const hub = sharedHub();
    const [a, b] = [createRuntime({ backend: hub.replica() }), createRuntime({ backend: hub.replica() })];
    a.emit("r", { kind: "output", text: "one" });
    a.emit("r", { kind: "output", text: "two" });
    const reading = readAll(b.watch("r"));
    await tick();
    a.emit("r", { kind: "thinking", text: "three" });
    a.emit("r", { kind: "done", outcome: "answered" });
    expect(await reading).toEqual(a.history("r"));
    expect(b.history("r")).toEqual([]);
    a.reset();
    b.reset();
  });

  it("reads a run this replica holds from its own bus, not the backend", async () => {
    const backend = sharedHub().replica();
    const runtime = createRuntime({ backend });
    runtime.emit("mine", { kind: "output", text: "here" });
    const reading = readAll(runtime.watch("mine"));
    runtime.emit("mine", { kind: "done" });
    expect((await reading).map((event) => event.seq)).toEqual([1, 2]);
    expect(backend.calls.follows).toEqual([]);
    expect(backend.calls.appended.map((call) => call.events[0]?.seq)).toEqual([1, 2]);
    runtime.reset();
  });

  it("waits for a run that has not started and resumes after the seq it is given", async () => {
    const hub = sharedHub();
    const [a, b] = [createRuntime({ backend: hub.replica() }), createRuntime({ backend: hub.replica() })];
    const reading = readAll(b.watch("later", undefined, { after: 2 }));
    await tick();
    for (const text of ["a", "b", "c"]) a.emit("later", { kind: "output", text });
    a.emit("later", { kind: "done" });
    expect((await reading).map((event) => event.seq)).toEqual([3, 4]);
    a.reset();
    b.reset();
  });

  it("tells a run whose early events the store no longer holds with the notice the in-memory bus gives", async () => {
    const memory = createRuntime();
    memory.configureEvents({ maxEvents: 5, trimSlack: 1 });
    const hub = sharedHub();
    hub.lose(
      "r",
      Array.from({ length: 16 }, (_, index) => index + 1),
    );
    const [a, b] = [createRuntime({ backend: hub.replica() }), createRuntime({ backend: hub.replica() })];
    for (let index = 1; index <= 20; index += 1) {
      memory.emit("r", { kind: "output", text: `t${index}` });
      a.emit("r", { kind: "output", text: `t${index}` });
    }
    memory.emit("r", { kind: "done" });
    a.emit("r", { kind: "done" });
    const [local, remote] = await Promise.all([readAll(memory.watch("r")), readAll(b.watch("r"))]);
    const shape = ({ kind, text, dropped, seq }: RunEvent & { text?: string; dropped?: number }) => ({ kind, text, dropped, seq });
    expect(remote.map((event) => event.seq)).toEqual([16, 17, 18, 19, 20, 21]);
    expect(shape(remote[0]!)).toEqual(shape(local[0]!));
    expect(remote[0]).toMatchObject({ kind: "notice", dropped: 16, seq: 16, at: remote[1]!.at });
    memory.reset();
    a.reset();
    b.reset();
  });

  it("tells each gap in the middle of a run once, just before the event after it", async () => {
    const hub = sharedHub();
    hub.lose("r", [3, 4, 7]);
    const [a, b] = [createRuntime({ backend: hub.replica() }), createRuntime({ backend: hub.replica() })];
    const reading = readAll(b.watch("r"));
    await tick();
    for (let index = 1; index <= 8; index += 1) a.emit("r", { kind: "output", text: `t${index}` });
    a.emit("r", { kind: "done" });
    const seen = await reading;
    expect(seen.map((event) => (event.kind === "notice" ? `gap ${event.dropped}` : event.seq))).toEqual([1, 2, "gap 2", 5, 6, "gap 1", 8, 9]);
    a.reset();
    b.reset();
  });

  it("caps a watcher that is not read at maxEvents plus trimSlack and counts what it dropped, as the in-memory watcher does", async () => {
    const memory = createRuntime();
    const hub = sharedHub();
    const [a, b] = [createRuntime({ backend: hub.replica() }), createRuntime({ backend: hub.replica() })];
    for (const runtime of [memory, b]) runtime.configureEvents({ maxEvents: 3, trimSlack: 1 });
    const watchers = [memory.watch("r"), b.watch("r")];
    const firsts = watchers.map((watcher) => watcher.next());
    await tick();
    for (const runtime of [memory, a]) runtime.emit("r", { kind: "output", text: "t1" });
    for (const first of firsts) expect((await first).value).toMatchObject({ seq: 1 });
    for (let index = 2; index <= 11; index += 1) {
      for (const runtime of [memory, a]) runtime.emit("r", index === 11 ? { kind: "done" } : { kind: "output", text: `t${index}` });
      await tick();
    }
    const [local, remote] = await Promise.all(watchers.map(readAll));
    expect(remote!.map((event) => (event.kind === "notice" ? `gap ${event.dropped} at ${event.seq}` : event.seq))).toEqual(["gap 6 at 7", 8, 9, 10, 11]);
    expect(remote!.map(({ at: _at, ...rest }) => rest)).toEqual(local!.map(({ at: _at, ...rest }) => rest));
    memory.reset();
    a.reset();
    b.reset();
  });

  it("finishes once the run is ended on another replica, after what it had queued", async () => {
    const hub = sharedHub();
    const [a, b] = [createRuntime({ backend: hub.replica() }), createRuntime({ backend: hub.replica() })];
    const reading = readAll(b.watch("r"));
    await tick();
    a.emit("r", { kind: "output", text: "only" });
    await tick();
    expect(a.endRun("r")).toBe(true);
    expect((await reading).map((event) => event.seq)).toEqual([1]);
    a.reset();
    b.reset();
  });

  it("stops at once, and stops the backend's following, when its signal aborts or it is returned", async () => {
    const backend = sharedHub().replica();
    const runtime = createRuntime({ backend });
    const controller = new AbortController();
    const aborted = runtime.watch("quiet", controller.signal);
    const pending = aborted.next();
    expect(backend.followers()).toBe(1);
    controller.abort();
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(backend.followers()).toBe(0);

    const returned = runtime.watch("quiet");
    const waiting = returned.next();
    await returned.return?.();
    expect(await waiting).toEqual({ done: true, value: undefined });
    expect(backend.followers()).toBe(0);
    expect(await runtime.watch("quiet", AbortSignal.abort()).next()).toEqual({ done: true, value: undefined });
    expect(backend.followers()).toBe(0);
  });

  it("ends every followed watcher on resetEvents and on reset", async () => {
    const backend = sharedHub().replica();
    const runtime = createRuntime({ backend });
    const first = runtime.watch("quiet").next();
    runtime.resetEvents();
    expect(await first).toEqual({ done: true, value: undefined });
    const second = runtime.watch("quiet").next();
    runtime.reset();
    expect(await second).toEqual({ done: true, value: undefined });
    expect(backend.followers()).toBe(0);
  });
});
