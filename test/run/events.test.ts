import { readFileSync } from "node:fs";
import v8 from "node:v8";
import vm from "node:vm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { configureEvents, emit, emitIn, endRun, fold, history, historyIn, resetEvents, runMetrics, watch, type RunEvent } from "../../src/run/events.js";
import { clearState, createState } from "../../src/state/state.js";

afterEach(() => {
  resetEvents();
  vi.useRealTimers();
});

/** Reads events until the watcher finishes. */
async function drain(iterator: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const seen: RunEvent[] = [];
  for await (const event of iterator) seen.push(event);
  return seen;
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("emit", () => {
  it("numbers each run's events from 1 and stamps when they happened", () => {
    const before = Date.now();
    const a1 = emit("a", { kind: "output", text: "x" });
    const b1 = emit("b", { kind: "output", text: "y" });
    const a2 = emit("a", { kind: "notice", text: "z" });
    expect([a1?.seq, b1?.seq, a2?.seq]).toEqual([1, 1, 2]);
    expect(a1?.at).toBeGreaterThanOrEqual(before);
    expect(a1).toMatchObject({ kind: "output", text: "x" });
  });

  it("assigns seq and at itself, whatever the caller put there", () => {
    const event = emit("a", { kind: "output", text: "x", seq: 99, at: 5 } as never);
    expect(event?.seq).toBe(1);
    expect(event?.at).not.toBe(5);
  });

  it("hands back a frozen event, so one watcher cannot rewrite what another reads", () => {
    const event = emit("a", { kind: "output", text: "x" });
    expect(Object.isFrozen(event)).toBe(true);
  });

  it("drops input it cannot file, without throwing", () => {
    const hostile = {
      get kind(): string {
        throw new Error("boom");
      },
    };
    expect(emit("", { kind: "output", text: "x" })).toBeUndefined();
    expect(emit(42 as never, { kind: "output", text: "x" })).toBeUndefined();
    expect(emit("a", null as never)).toBeUndefined();
    expect(emit("a", { text: "no kind" } as never)).toBeUndefined();
    expect(emit("a", hostile as never)).toBeUndefined();
    const trap = {
      kind: "output",
      get text(): string {
        throw new Error("boom");
      },
    };
    expect(emit("b", trap as never)).toBeUndefined();
    expect(history("a")).toEqual([]);
    expect(emit("b", { kind: "output", text: "first real event" })?.seq).toBe(1);
  });

  it("drops events for a run that has ended, rather than numbering past its done", () => {
    emit("a", { kind: "output", text: "x" });
    emit("a", { kind: "done", outcome: "answered" });
    expect(emit("a", { kind: "output", text: "late" })).toBeUndefined();
    expect(history("a").map((event) => event.kind)).toEqual(["output", "done"]);
  });

  it("says once, as a process warning naming the run, that a reused run id's events are dropped", async () => {
    const warnings: Error[] = [];
    const hear = (warning: Error): void => void warnings.push(warning);
    process.on("warning", hear);
    try {
      emit("reused", { kind: "done", outcome: "answered" });
      expect(emit("reused", { kind: "output", text: "second run" })).toBeUndefined();
      expect(emit("reused", { kind: "output", text: "more" })).toBeUndefined();
      await new Promise((resolve) => setImmediate(resolve));
      const ours = warnings.filter((warning) => warning.name === "AgentCoreNotice" && warning.message.includes('"reused"'));
      expect(ours).toHaveLength(1);
      expect(ours[0]!.message).toMatch(/Run "reused" has ended, so its "output" event and every later one are dropped/);
    } finally {
      process.off("warning", hear);
    }
  });

  it("continues a run that ended awaiting approval when its resumed event comes, numbering on", () => {
    emit("paused", { kind: "output", text: "x" });
    emit("paused", { kind: "done", outcome: "awaiting-approval" });
    expect(emit("paused", { kind: "resumed", step: 0, pending: 1 })?.seq).toBe(3);
    expect(emit("paused", { kind: "done", outcome: "answered" })?.seq).toBe(4);
    expect(emit("paused", { kind: "resumed", step: 0, pending: 0 })).toBeUndefined();
  });

  it("drops events for a run endRun ended, until the run is reaped", () => {
    vi.useFakeTimers();
    emit("a", { kind: "output", text: "x" });
    expect(endRun("a")).toBe(true);
    expect(history("a")).toEqual([]);
    expect(emit("a", { kind: "output", text: "late" })).toBeUndefined();
    vi.advanceTimersByTime(60_000);
    expect(emit("a", { kind: "output", text: "new run" })?.seq).toBe(1);
  });

  it("trims the backlog in batches: it runs to cap plus slack, then back to the cap", () => {
    configureEvents({ maxEvents: 4, trimSlack: 2 });
    for (let i = 0; i < 6; i++) emit("chatty", { kind: "output", text: String(i) });
    expect(history("chatty")).toHaveLength(6);
    emit("chatty", { kind: "output", text: "6" });
    expect(history("chatty").map((event) => event.seq)).toEqual([4, 5, 6, 7]);
  });

  it("keeps each runtime's runs apart", () => {
    const state = createState();
    emitIn(state, "a", { kind: "output", text: "tenant" });
    expect(history("a")).toEqual([]);
    expect(historyIn(state, "a")).toHaveLength(1);
    clearState(state);
  });
});

describe("history", () => {
  it("reads an unknown run as empty", () => {
    expect(history("never")).toEqual([]);
  });

  it("returns a copy and resumes after a seq", () => {
    for (let i = 0; i < 5; i++) emit("a", { kind: "output", text: String(i) });
    const all = history("a");
    all.length = 0;
    expect(history("a")).toHaveLength(5);
    expect(history("a", { after: 3 }).map((event) => event.seq)).toEqual([4, 5]);
  });

  it("reads a request without a usable seq as one for everything kept", () => {
    for (let i = 0; i < 3; i++) emit("a", { kind: "output", text: String(i) });
    expect(history("a", { after: Number.NaN })).toHaveLength(3);
    expect(history("a", { after: "2" as never })).toHaveLength(3);
    expect(history("a", {})).toHaveLength(3);
  });
});

describe("watch", () => {
  it("replays what the run kept, then what happens next, and finishes on done", async () => {
    emit("a", { kind: "output", text: "1" });
    const seen = drain(watch("a"));
    await nextTurn();
    emit("a", { kind: "output", text: "2" });
    emit("a", { kind: "done", outcome: "answered" });
    expect((await seen).map((event) => event.seq)).toEqual([1, 2, 3]);
  });

  it("hands a watcher attached mid-run every event once, in order, while another task emits", async () => {
    const total = 600;
    const emitter = (async () => {
      for (let i = 1; i <= total; i++) {
        emit("busy", { kind: "output", text: String(i) });
        if (i % 7 === 0) await nextTurn();
      }
      emit("busy", { kind: "done", outcome: "answered" });
    })();
    const watchers: Promise<RunEvent[]>[] = [];
    for (let joined = 0; joined < 5; joined++) {
      // Each joins at a different point of the run, some while a batch is in flight.
      for (let wait = 0; wait < 10 + joined * 9; wait++) await nextTurn();
      watchers.push(drain(watch("busy")));
    }
    watchers.push(drain(watch("busy")));
    await emitter;
    const expected = Array.from({ length: total + 1 }, (_, i) => i + 1);
    for (const seen of await Promise.all(watchers)) {
      expect(seen.map((event) => event.seq)).toEqual(expected);
      expect(seen.at(-1)?.kind).toBe("done");
    }
  });

  it("resumes after the seq a client already has", async () => {
    for (let i = 0; i < 4; i++) emit("a", { kind: "output", text: String(i) });
    emit("a", { kind: "done" });
    const seen = await drain(watch("a", undefined, { after: 2 }));
    expect(seen.map((event) => event.seq)).toEqual([3, 4, 5]);
  });

  it("skips live events at or below the seq a client already has", async () => {
    emit("a", { kind: "output", text: "1" });
    const seen = drain(watch("a", undefined, { after: 3 }));
    await nextTurn();
    for (let i = 2; i <= 4; i++) emit("a", { kind: "output", text: String(i) });
    emit("a", { kind: "done" });
    expect((await seen).map((event) => event.seq)).toEqual([4, 5]);
  });

  it("replays everything for a request that carries no usable seq", async () => {
    for (let i = 0; i < 3; i++) emit("a", { kind: "output", text: String(i) });
    emit("a", { kind: "done" });
    for (const after of [undefined, Number.NaN, "1" as never, Number.POSITIVE_INFINITY]) {
      expect(await drain(watch("a", undefined, { after }))).toHaveLength(4);
    }
  });

  it("leaves within one event-loop turn when its signal aborts while it waits", async () => {
    emit("a", { kind: "output", text: "1" });
    const controller = new AbortController();
    const watcher = watch("a", controller.signal);
    await watcher.next();
    const waiting = watcher.next();
    await nextTurn();
    controller.abort();
    const result = await Promise.race([waiting, new Promise((resolve) => setImmediate(() => resolve("late")))]);
    expect(result).toEqual({ done: true, value: undefined });
  });

  it("ends a for-await loop suspended on a run that never says anything, when the signal aborts", async () => {
    const controller = new AbortController();
    const loop = drain(watch("silent", controller.signal));
    await nextTurn();
    controller.abort();
    expect(await loop).toEqual([]);
    // Nothing was recorded under the run, so nothing is left behind.
    expect(history("silent")).toEqual([]);
  });

  it("reads nothing under a signal that has already aborted", async () => {
    emit("a", { kind: "output", text: "1" });
    expect(await drain(watch("a", AbortSignal.abort()))).toEqual([]);
  });

  it("ends a pending read when return() is called", async () => {
    const watcher = watch("a");
    const waiting = watcher.next();
    await watcher.return?.();
    expect(await waiting).toEqual({ done: true, value: undefined });
  });

  it("waits for a run that has not started yet", async () => {
    const seen = drain(watch("later"));
    await nextTurn();
    emit("later", { kind: "output", text: "hi" });
    emit("later", { kind: "done" });
    expect((await seen).map((event) => event.kind)).toEqual(["output", "done"]);
  });

  it("hands out what it had queued and then finishes when the run is ended", async () => {
    emit("a", { kind: "output", text: "1" });
    const watcher = watch("a");
    await watcher.next();
    emit("a", { kind: "output", text: "2" });
    endRun("a");
    expect((await drain(watcher)).map((event) => event.seq)).toEqual([2]);
  });

  it("finishes a waiting watcher when the run is ended", async () => {
    const seen = drain(watch("a"));
    await nextTurn();
    endRun("a");
    expect(await seen).toEqual([]);
  });

  it("reports a stalled watcher's gap once, with a seq inside the gap", async () => {
    configureEvents({ maxEvents: 10, trimSlack: 5 });
    const watcher = watch("a");
    const first = watcher.next();
    emit("a", { kind: "output", text: "0" });
    expect((await first).value?.seq).toBe(1);
    for (let i = 1; i < 100; i++) emit("a", { kind: "output", text: String(i) });
    emit("a", { kind: "done" });
    const rest = await drain(watcher);
    const notices = rest.filter((event) => event.kind === "notice");
    expect(notices).toHaveLength(1);
    const [notice, next] = rest as [RunEvent & { dropped: number }, RunEvent];
    expect(notice.kind).toBe("notice");
    expect(notice.seq).toBe(next.seq - 1);
    expect(notice.seq).toBeGreaterThan(1);
    expect(notice.dropped).toBe(next.seq - 2);
    const seqs = rest.slice(1).map((event) => event.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => (seqs[0] as number) + i));
    expect(seqs.at(-1)).toBe(101);
    expect(seqs.length).toBeLessThanOrEqual(15);
  });

  it("reports backlog a late watcher can no longer replay as a gap", async () => {
    configureEvents({ maxEvents: 4, trimSlack: 2 });
    for (let i = 0; i < 7; i++) emit("a", { kind: "output", text: String(i) });
    emit("a", { kind: "done" });
    const seen = await drain(watch("a"));
    expect(seen[0]).toMatchObject({ kind: "notice", seq: 3, dropped: 3 });
    expect(seen.slice(1).map((event) => event.seq)).toEqual([4, 5, 6, 7, 8]);
  });

  it("keeps a stalled watcher's memory bounded under a million events, and reports one gap", async () => {
    const gc = findGc();
    if (gc === undefined) {
      console.warn("skipped: no way to force garbage collection in this process (run node with --expose-gc)");
      return;
    }
    gc();
    const before = process.memoryUsage().heapUsed;
    const watcher = watch("flood");
    const first = watcher.next();
    emit("flood", { kind: "output", text: "x" });
    expect((await first).value?.seq).toBe(1);
    for (let i = 1; i < 1_000_000; i++) emit("flood", { kind: "output", text: "x" });
    gc();
    const growth = process.memoryUsage().heapUsed - before;
    // An uncapped queue would hold a million events here — tens of MiB. Capped, it and the
    // backlog hold about 1,256 each.
    const bound = 8 * 1024 * 1024;
    console.info(`heap growth with a stalled watcher after 1,000,000 events: ${(growth / 1024).toFixed(0)} KiB (bound ${bound / 1024} KiB)`);
    expect(growth).toBeLessThan(bound);
    emit("flood", { kind: "done" });
    const rest = await drain(watcher);
    const notices = rest.filter((event) => event.kind === "notice");
    expect(notices).toHaveLength(1);
    const gapAt = rest.findIndex((event) => event.kind === "notice");
    const notice = rest[gapAt]!;
    const after = rest[gapAt + 1]!;
    expect(notice.seq).toBeGreaterThan(1);
    expect(notice.seq).toBeLessThan(after.seq);
    expect(rest.at(-1)?.seq).toBe(1_000_001);
  });
});

describe("the sweep", () => {
  it("reaps an ended run retainMs after its done, not before", () => {
    vi.useFakeTimers();
    emit("a", { kind: "done", outcome: "answered" });
    vi.advanceTimersByTime(59_999);
    expect(history("a")).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(history("a")).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("reaps a run that went quiet without ending retainUnendedMs after its last event", () => {
    vi.useFakeTimers();
    emit("a", { kind: "output", text: "half a thought" });
    vi.advanceTimersByTime(20 * 60_000);
    emit("a", { kind: "output", text: " and more" });
    vi.advanceTimersByTime(30 * 60_000 - 1);
    expect(history("a")).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(history("a")).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("reaps on the deadlines configureEvents gives, including for runs already held", () => {
    vi.useFakeTimers();
    emit("a", { kind: "output", text: "x" });
    configureEvents({ retainUnendedMs: 60_000 });
    vi.advanceTimersByTime(60_000);
    expect(history("a")).toEqual([]);
  });

  it("never reaps a run somebody is watching, and reaps it once they leave", async () => {
    vi.useFakeTimers();
    emit("a", { kind: "output", text: "x" });
    const controller = new AbortController();
    const watcher = watch("a", controller.signal);
    await watcher.next();
    vi.advanceTimersByTime(2 * 60 * 60_000);
    expect(history("a")).toHaveLength(1);
    controller.abort();
    vi.advanceTimersByTime(0);
    expect(history("a")).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("reaps a run whose only watcher was never read, since an unread watcher has not subscribed", () => {
    vi.useFakeTimers();
    const watcher = watch("a");
    emit("a", { kind: "done" });
    vi.advanceTimersByTime(60_000);
    expect(history("a")).toEqual([]);
    expect(watcher).toBeDefined();
  });

  it("keeps no timer while the bus holds no runs, and resetEvents clears it", () => {
    vi.useFakeTimers();
    expect(vi.getTimerCount()).toBe(0);
    emit("a", { kind: "output", text: "x" });
    emit("b", { kind: "output", text: "y" });
    expect(vi.getTimerCount()).toBe(1);
    resetEvents();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("clears its timer when the runtime state is cleared", () => {
    vi.useFakeTimers();
    const state = createState();
    emitIn(state, "a", { kind: "output", text: "x" });
    expect(vi.getTimerCount()).toBe(1);
    clearState(state);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("configureEvents", () => {
  it("returns the whole set as it now stands", () => {
    expect(configureEvents()).toEqual({ maxEvents: 1000, trimSlack: 256, retainMs: 60_000, retainUnendedMs: 1_800_000, maxRuns: 1000 });
    expect(configureEvents({ maxEvents: 200 })).toEqual({
      maxEvents: 200,
      trimSlack: 256,
      retainMs: 60_000,
      retainUnendedMs: 1_800_000,
      maxRuns: 1000,
    });
  });

  it("keeps what it has for anything but a number above zero", () => {
    const before = configureEvents();
    const after = configureEvents({
      maxEvents: 0,
      trimSlack: -1,
      retainMs: Number.NaN,
      retainUnendedMs: "5" as never,
      maxRuns: -3,
    });
    expect(after).toEqual(before);
  });

  it("is put back by resetEvents", () => {
    configureEvents({ maxEvents: 3 });
    resetEvents();
    expect(configureEvents().maxEvents).toBe(1000);
  });
});

describe("fold", () => {
  it("joins consecutive deltas of one kind into a block that carries the last seq", () => {
    emit("a", { kind: "thinking", text: "Let me " });
    emit("a", { kind: "thinking", text: "think." });
    emit("a", { kind: "output", text: "Hel" });
    emit("a", { kind: "output", text: "lo" });
    emit("a", { kind: "tool-call", id: "c1", name: "read", args: "{}" });
    emit("a", { kind: "output", text: "!" });
    const blocks = fold(history("a"));
    expect(blocks.map((block) => [block.kind, "text" in block ? block.text : "", block.seq])).toEqual([
      ["thinking", "Let me think.", 2],
      ["output", "Hello", 4],
      ["tool-call", "", 5],
      ["output", "!", 6],
    ]);
  });

  it("leaves the events it was given as they were", () => {
    emit("a", { kind: "output", text: "a" });
    emit("a", { kind: "output", text: "b" });
    const events = history("a");
    fold(events);
    expect(events.map((event) => ("text" in event ? event.text : ""))).toEqual(["a", "b"]);
  });

  it("skips what is not an event and reads a non-array as empty", () => {
    expect(fold([null, 3] as never)).toEqual([]);
    expect(fold("x" as never)).toEqual([]);
  });
});

interface EventLog {
  contextLength?: number;
  events: RunEvent[];
}

const log = (name: string): EventLog => JSON.parse(readFileSync(new URL(`../fixtures/event-logs/${name}.json`, import.meta.url), "utf8")) as EventLog;

describe("runMetrics", () => {
  it("adds up a llama.cpp run field by field", () => {
    const { events, contextLength } = log("llamacpp-tool-run");
    const metrics = runMetrics(events, { contextLength });
    expect(metrics.turns).toBe(4);
    expect(metrics.promptTokens).toBe(16_350);
    expect(metrics.completionTokens).toBe(770);
    expect(metrics.totalTokens).toBe(17_120);
    expect(metrics.cachedTokens).toBe(4_390);
    expect(metrics.cacheHitRatio).toBeCloseTo(4_390 / 16_350, 10);
    expect(metrics.cacheBreaks).toBe(2);
    expect(metrics.cacheBreaksByReason).toEqual({ "tools-changed": 1, "none-known": 1 });
    expect(metrics.prefillMs).toBeCloseTo(7_973.3, 6);
    expect(metrics.decodeMs).toBe(19_250);
    expect(metrics.prefillTokensPerSecond).toBeCloseTo((11_960 * 1000) / 7_973.3, 6);
    expect(metrics.decodeTokensPerSecond).toBeCloseTo(40, 10);
    expect(metrics.toolMs).toBe(65);
    expect(metrics.slowestTurn).toEqual({ index: 2, durationMs: 15_700 });
    expect(metrics.meanFirstTokenMs).toBe(2_062.5);
    expect(metrics.draftAcceptance).toBeCloseTo(0.7, 10);
    expect(metrics.largestPrompt).toBe(5_700);
    expect(metrics.largestPromptShare).toBeCloseTo(5_700 / 8_192, 10);
    expect(metrics.turnsCutOff).toBe(1);
    expect(metrics.toolCalls).toBe(4);
    expect(metrics.toolErrors).toBe(3);
    expect(metrics.toolErrorsByName).toEqual({ list_dir: 2, grep: 1 });
    expect(metrics.notices).toBe(1);
    expect(metrics.errors).toBe(0);
    expect(metrics.outcome).toBe("answered");
    expect(metrics.durationMs).toBe(27_661 - 1_520);
    expect(metrics).not.toHaveProperty("reasoningTokens");
  });

  it("leaves out what a hosted endpoint never reported, and reads the failure", () => {
    const metrics = runMetrics(log("hosted-failed-run").events);
    expect(metrics).toMatchObject({
      turns: 1,
      promptTokens: 820,
      completionTokens: 210,
      totalTokens: 1_030,
      cachedTokens: 0,
      reasoningTokens: 64,
      slowestTurn: { index: 0, durationMs: 2_100 },
      meanFirstTokenMs: 640,
      largestPrompt: 820,
      toolCalls: 1,
      toolErrors: 0,
      errors: 1,
      outcome: "failed",
    });
    for (const absent of [
      "cacheHitRatio",
      "prefillMs",
      "decodeMs",
      "prefillTokensPerSecond",
      "decodeTokensPerSecond",
      "toolMs",
      "draftAcceptance",
      "largestPromptShare",
    ]) {
      expect(metrics).not.toHaveProperty(absent);
    }
  });

  it("keeps the counts and drops everything else for a run that never reported usage or ended", () => {
    const metrics = runMetrics(log("unfinished-run").events);
    expect(metrics).toEqual({
      turns: 0,
      promptTokens: 0,
      completionTokens: 0,
      totalTokens: 0,
      cachedTokens: 0,
      cacheBreaks: 0,
      cacheBreaksByReason: {},
      turnsCutOff: 0,
      toolCalls: 0,
      toolErrors: 0,
      toolErrorsByName: {},
      errors: 0,
      notices: 1,
      invalidArguments: 0,
      approvalsRequested: 0,
      approvalsGranted: 0,
      approvalsDenied: 0,
      resumes: 0,
      outcome: "unfinished",
      durationMs: 950,
    });
  });

  it("counts durationMs from startedAt where the run started before its first event", () => {
    const events: RunEvent[] = [
      { kind: "notice", text: "n", seq: 1, at: 1_200 },
      { kind: "done", outcome: "answered", seq: 2, at: 2_300 },
    ];
    expect(runMetrics(events).durationMs).toBe(1_100);
    expect(runMetrics(events, { startedAt: 0 }).durationMs).toBe(2_300);
    expect(runMetrics(events, { startedAt: 1_500 }).durationMs).toBe(1_100);
    expect(runMetrics([], { startedAt: 0 }).durationMs).toBeUndefined();
  });

  it("reads a done without an outcome as failed after an error and answered otherwise", () => {
    const done: RunEvent = { kind: "done", seq: 2, at: 2 };
    expect(runMetrics([{ kind: "error", message: "x", seq: 1, at: 1 }, done]).outcome).toBe("failed");
    expect(runMetrics([done]).outcome).toBe("answered");
  });

  it("reads what the bus kept for a run", () => {
    for (const event of log("llamacpp-tool-run").events) {
      const { seq: _seq, at: _at, ...input } = event;
      emit("replayed", input as never);
    }
    expect(runMetrics(history("replayed")).turns).toBe(4);
  });

  it("sums the turns' tokens where no usage event carried the run's totals", () => {
    const events = log("llamacpp-tool-run").events.map((event) => {
      if (event.kind !== "usage") return event;
      const { totals: _totals, ...rest } = event;
      // A usage event without its totals, which runMetrics still adds up.
      return rest as never;
    });
    expect(runMetrics(events)).toMatchObject({ promptTokens: 16_350, completionTokens: 770, totalTokens: 17_120, cachedTokens: 4_390 });
  });

  it("skips malformed events and reads a non-array as no events", () => {
    expect(runMetrics([null, { kind: "usage" }, { kind: "usage", turn: 3 }] as never).turns).toBe(0);
    expect(runMetrics(undefined as never).outcome).toBe("unfinished");
  });
});

/** global.gc where node was started with --expose-gc, or the same function exposed at run time. */
function findGc(): (() => void) | undefined {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === "function") return exposed;
  try {
    v8.setFlagsFromString("--expose-gc");
    const gc: unknown = vm.runInNewContext("gc");
    return typeof gc === "function" ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}
