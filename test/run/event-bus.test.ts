import { afterEach, describe, expect, it, vi } from "vitest";
import { EVENT_BUS, EVENT_DEFAULTS } from "../../src/run/event-bus.js";
import { configureEventsIn, emitIn, endRunIn, historyIn, watchIn } from "../../src/run/events.js";
import { clearState, createState, slotOf, type RuntimeState } from "../../src/state/state.js";
import type { RunEvent } from "../../src/shapes/event-types.js";

const states: RuntimeState[] = [];
afterEach(() => {
  for (const state of states.splice(0)) clearState(state);
  vi.useRealTimers();
});

/** A state whose bus holds at most `maxRuns` runs. */
function busOf(maxRuns: number): RuntimeState {
  const state = createState();
  states.push(state);
  configureEventsIn(state, { maxRuns });
  return state;
}

const held = (state: RuntimeState) => [...slotOf(state, EVENT_BUS).streams.keys()];

async function drain(iterator: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const seen: RunEvent[] = [];
  for await (const event of iterator) seen.push(event);
  return seen;
}

describe("the bound on runs held", () => {
  it("defaults to 1000 and holds no more, however many runs never end", () => {
    expect(EVENT_DEFAULTS.maxRuns).toBe(1000);
    const state = createState();
    states.push(state);
    for (let index = 0; index < 2500; index += 1) emitIn(state, `run-${index}`, { kind: "output", text: "never done" });
    expect(held(state)).toHaveLength(1000);
    expect(held(state)[0]).toBe("run-1500");
  });

  it("drops the run that ended longest ago first, then the unended run quiet longest", () => {
    vi.useFakeTimers({ now: 1_000 });
    const state = busOf(3);
    emitIn(state, "old-unended", { kind: "output", text: "a" });
    vi.advanceTimersByTime(10);
    emitIn(state, "ends-late", { kind: "output", text: "b" });
    emitIn(state, "ends-early", { kind: "output", text: "c" });
    vi.advanceTimersByTime(10);
    emitIn(state, "ends-early", { kind: "done" });
    vi.advanceTimersByTime(10);
    endRunIn(state, "ends-late");
    emitIn(state, "new-1", { kind: "output", text: "d" });
    expect(held(state).sort()).toEqual(["ends-late", "new-1", "old-unended"]);
    emitIn(state, "new-2", { kind: "output", text: "e" });
    expect(held(state).sort()).toEqual(["new-1", "new-2", "old-unended"]);
    vi.advanceTimersByTime(10);
    // A run that emits again is no longer the quietest.
    emitIn(state, "old-unended", { kind: "output", text: "f" });
    emitIn(state, "new-3", { kind: "output", text: "g" });
    expect(held(state).sort()).toEqual(["new-2", "new-3", "old-unended"]);
    expect(historyIn(state, "new-1")).toEqual([]);
  });

  it("gives a watcher of a dropped unended run what it had queued, then one runDropped notice, then ends", async () => {
    const state = busOf(2);
    emitIn(state, "watched", { kind: "output", text: "one" });
    emitIn(state, "watched", { kind: "output", text: "two" });
    const watcher = watchIn(state, "watched");
    const first = await watcher.next();
    expect(first.value).toMatchObject({ kind: "output", text: "one" });
    emitIn(state, "b", { kind: "output", text: "x" });
    emitIn(state, "c", { kind: "output", text: "y" });
    const rest = await drain(watcher);
    expect(rest).toEqual([
      expect.objectContaining({ kind: "output", text: "two", seq: 2 }),
      expect.objectContaining({ kind: "notice", runDropped: true, seq: 3, text: expect.stringContaining("at most 2 runs") }),
    ]);
    expect(held(state).sort()).toEqual(["b", "c"]);
    expect(await watcher.next()).toEqual({ done: true, value: undefined });
  });

  it("wakes a watcher waiting on a run with nothing queued, and ends it", async () => {
    const state = busOf(1);
    const watcher = watchIn(state, "not started");
    const waiting = watcher.next();
    emitIn(state, "other", { kind: "output", text: "x" });
    expect((await waiting).value).toMatchObject({ kind: "notice", runDropped: true, seq: 1 });
    expect(await watcher.next()).toEqual({ done: true, value: undefined });
    expect(held(state)).toEqual(["other"]);
  });

  it("lets a watcher of a dropped run that had ended read on to its done, with no notice", async () => {
    const state = busOf(1);
    emitIn(state, "finished", { kind: "output", text: "a" });
    emitIn(state, "finished", { kind: "done" });
    const watcher = watchIn(state, "finished");
    expect((await watcher.next()).value).toMatchObject({ seq: 1 });
    emitIn(state, "next", { kind: "output", text: "b" });
    expect((await drain(watcher)).map((event) => event.kind)).toEqual(["done"]);
  });

  it("applies a lower bound from the next run taken in, and leaves no timer behind", () => {
    vi.useFakeTimers();
    const state = busOf(10);
    for (let index = 0; index < 5; index += 1) emitIn(state, `r${index}`, { kind: "output", text: "x" });
    expect(configureEventsIn(state, { maxRuns: 2 }).maxRuns).toBe(2);
    expect(held(state)).toHaveLength(5);
    emitIn(state, "r5", { kind: "output", text: "x" });
    expect(held(state)).toEqual(["r4", "r5"]);
    clearState(state);
    expect(vi.getTimerCount()).toBe(0);
  });
});
