/**
 * @module events
 * An in-memory bus for what a run does while it does it: emit, watch, history, fold, endRun,
 * and runMetrics for what the run cost.
 *
 * Each run keeps a capped backlog so a watcher that arrives late still reads the run from (near)
 * its start. Each watcher keeps a capped queue of its own, so one that stops reading costs a
 * bounded amount of memory and is told, once, where it lost events. A single unref'd timer reaps
 * runs that ended a while ago or went quiet without ending; it runs only while the bus holds runs
 * and never reaps a run somebody is watching.
 */

import { EVENT_BUS, EVENT_DEFAULTS, RunWatcher, clearBus, count, deadlineOf, fileRun, rescheduleSweep, scheduleSweep, type Stream } from "./event-bus.js";
import { closeFollowersIn, followRunIn } from "./event-follow.js";
import type { EventSettings, EventStamp, OutputEvent, RunEvent, RunEventInput, ThinkingEvent } from "../shapes/event-types.js";
import { defaultState, slotOf, type RuntimeState } from "../state/state.js";

export type {
  ApprovalDecidedEvent,
  ApprovalRequestedEvent,
  CacheBreakReason,
  DoneEvent,
  EventSettings,
  InvalidArgumentsEvent,
  NoticeEvent,
  OutputEvent,
  ResumedEvent,
  RunErrorEvent,
  RunEvent,
  RunEventInput,
  RunEventKind,
  RunOutcome,
  RunTotals,
  ThinkingEvent,
  ToolCallEvent,
  ToolResultEvent,
  TurnMetrics,
  UsageEvent,
} from "../shapes/event-types.js";
export { runMetrics, type RunMetrics, type RunMetricsOptions } from "./run-metrics.js";

/** A streamed-text event as the bus keeps it: what {@link fold} joins. */
type TextEvent = (OutputEvent | ThinkingEvent) & EventStamp;

/** Options for {@link watch} and {@link history}. */
export interface ReplayOptions {
  /** Replay only events after this seq (a client resuming); absent or not a number replays everything kept. */
  after?: number | undefined;
}

/** Whether an event continues a run that ended awaiting approval: its `resumed`, right after that `done`. */
function resumesPaused(stream: Stream, event: RunEventInput): boolean {
  const last = stream.events.at(-1);
  return event.kind === "resumed" && last?.kind === "done" && last.outcome === "awaiting-approval";
}

/** Drops an event for an ended run, saying why once per run as a process warning (`AgentCoreNotice`). */
function dropAfterEnd(stream: Stream, runId: string, event: RunEventInput): undefined {
  if (stream.dropWarned) return undefined;
  stream.dropWarned = true;
  process.emitWarning(
    `Run "${runId}" has ended, so its "${event.kind}" event and every later one are dropped until the run is reaped; give each run its own runId (a resumed run continues the one it paused).`,
    "AgentCoreNotice",
  );
  return undefined;
}

/**
 * Records one event for a run and hands it to everyone watching; the state-taking form of {@link emit}.
 * @internal
 */
export function emitIn(state: RuntimeState, runId: string, event: RunEventInput): RunEvent | undefined {
  try {
    if (typeof runId !== "string" || runId === "") return undefined;
    if (event === null || typeof event !== "object" || typeof event.kind !== "string") return undefined;
    const bus = slotOf(state, EVENT_BUS);
    const now = Date.now();
    let stream = bus.streams.get(runId);
    if (stream?.endedAt !== undefined) {
      if (!resumesPaused(stream, event)) return dropAfterEnd(stream, runId, event);
      delete stream.endedAt;
    }
    // Built before the run is filed, so an input whose getters throw leaves nothing behind.
    const stamped: RunEvent = Object.freeze({ ...event, seq: (stream?.seq ?? 0) + 1, at: now });
    if (stream === undefined) {
      stream = { seq: 0, events: [], watchers: new Set(), touched: now };
      fileRun(bus, runId, stream);
    }
    stream.seq = stamped.seq;
    stream.touched = now;
    stream.events.push(stamped);
    const { maxEvents, trimSlack } = bus.settings;
    if (stream.events.length > count(maxEvents) + count(trimSlack)) {
      stream.events.splice(0, stream.events.length - count(maxEvents));
    }
    if (stamped.kind === "done") stream.endedAt = now;
    for (const watcher of stream.watchers) watcher.push(stamped);
    state.link?.backend.appendEvents(runId, [stamped], bus.settings);
    scheduleSweep(bus, deadlineOf(stream, bus.settings));
    return stamped;
  } catch {
    return undefined;
  }
}

/**
 * Records one event for a run, numbering it, and hands it to everyone watching that run.
 *
 * The bus assigns `seq` (per run, from 1) and `at` (epoch milliseconds); anything the caller put
 * under those names is overwritten. The first event for a run id starts the run. Never throws:
 * an empty or non-string run id, an input with no string `kind`, and any event for a run that
 * has ended (after its `done`, or after {@link endRun}, until the run is reaped) are dropped and
 * answered with `undefined`. A run id reused after its `done` is told once, as a process warning
 * (`AgentCoreNotice`) naming the run, rather than dropped in silence; the one exception is a
 * `resumed` event right after a `done` whose outcome is `awaiting-approval`, which continues
 * that run, numbering on.
 *
 * @param runId - The run the event belongs to.
 * @param event - The event without its `seq` and `at`.
 * @returns The event as stored (frozen), or `undefined` where it was dropped.
 * @example
 * emit(runId, { kind: "output", text: "Hello" });
 */
export function emit(runId: string, event: RunEventInput): RunEvent | undefined {
  return emitIn(defaultState, runId, event);
}

/**
 * Streams a run's events to one watcher; the state-taking form of {@link watch}.
 * @internal
 */
export function watchIn(state: RuntimeState, runId: string, signal?: AbortSignal, options: ReplayOptions = {}): AsyncIterableIterator<RunEvent> {
  const after = typeof options?.after === "number" && Number.isFinite(options.after) ? options.after : 0;
  const bus = slotOf(state, EVENT_BUS);
  if (state.link !== undefined && !bus.streams.has(String(runId))) return followRunIn(state, state.link, String(runId), signal, after);
  return new RunWatcher(bus, String(runId), signal, after);
}

/**
 * Streams a run's events: first what the run has kept, then each new one, until `done`.
 *
 * Every event reaches the watcher once, in seq order, with nothing missed between the replay and
 * the live part. The watcher subscribes on its first read, so one that is never read holds
 * nothing. Its queue is capped like the backlog (`maxEvents`, trimmed by `trimSlack`); what it
 * falls behind by is dropped oldest first and released at once, and the first read after a gap
 * is one `notice` event whose `dropped` says how many went and whose `seq` is the one just before
 * the next real event — a number no real event handed to this watcher carries. A run whose early
 * events were already trimmed from the backlog is reported the same way.
 *
 * It finishes after `done`, when the run is dropped ({@link endRun}, a reset, or past `maxRuns`,
 * after a `notice` with `runDropped: true` where the run had not ended), and — at once, even
 * while waiting for the next event — when `signal` aborts or `return()` is called. A watcher
 * still attached keeps its run from being reaped, so pass a signal for anything that can go away.
 * Watching a run that has not started waits for it.
 *
 * @param runId - The run to watch.
 * @param signal - Ends the watch early.
 * @param options - `after` resumes after a seq the client already has.
 * @example
 * for await (const event of watch(runId, request.signal)) render(event);
 */
export function watch(runId: string, signal?: AbortSignal, options?: ReplayOptions): AsyncIterableIterator<RunEvent> {
  return watchIn(defaultState, runId, signal, options);
}

/**
 * Reads what a run has kept without subscribing; the state-taking form of {@link history}.
 * @internal
 */
export function historyIn(state: RuntimeState, runId: string, options: ReplayOptions = {}): RunEvent[] {
  const stream = slotOf(state, EVENT_BUS).streams.get(runId);
  if (stream === undefined) return [];
  const after = typeof options?.after === "number" && Number.isFinite(options.after) ? options.after : undefined;
  return after === undefined ? stream.events.slice() : stream.events.filter((event) => event.seq > after);
}

/**
 * Returns the events a run has kept, oldest first, without subscribing.
 *
 * At most `maxEvents` plus `trimSlack` of the latest. An unknown or reaped run has none.
 *
 * @param runId - The run to read.
 * @param options - `after` returns only the events after that seq.
 */
export function history(runId: string, options?: ReplayOptions): RunEvent[] {
  return historyIn(defaultState, runId, options);
}

/**
 * Drops a run's backlog and ends its watchers; the state-taking form of {@link endRun}.
 * @internal
 */
export function endRunIn(state: RuntimeState, runId: string): boolean {
  const bus = slotOf(state, EVENT_BUS);
  if (typeof runId === "string" && runId !== "") state.link?.backend.endRun(runId, bus.settings);
  const stream = bus.streams.get(runId);
  if (stream === undefined) return false;
  stream.events = [];
  stream.endedAt ??= Date.now();
  for (const watcher of [...stream.watchers]) watcher.close();
  stream.watchers.clear();
  scheduleSweep(bus, Math.max(deadlineOf(stream, bus.settings), Date.now()));
  return true;
}

/**
 * Drops a run's backlog now, for a run that is over — including one that never emitted `done`.
 *
 * Its watchers hand out what they had already queued and then finish. The run id is remembered
 * as ended until `retainMs` passes, so a late event for it is dropped rather than starting the
 * numbering again at 1.
 *
 * @param runId - The run to drop.
 * @returns Whether the bus held the run.
 */
export function endRun(runId: string): boolean {
  return endRunIn(defaultState, runId);
}

/**
 * Moves the bus's cap, slack or deadlines; the state-taking form of {@link configureEvents}.
 * @internal
 */
export function configureEventsIn(state: RuntimeState, options: Partial<EventSettings> = {}): EventSettings {
  const bus = slotOf(state, EVENT_BUS);
  let moved = false;
  for (const key of Object.keys(EVENT_DEFAULTS) as (keyof EventSettings)[]) {
    const value: unknown = options?.[key];
    if (typeof value === "number" && value > 0) {
      bus.settings[key] = value;
      moved = true;
    }
  }
  if (moved && bus.streams.size > 0) rescheduleSweep(bus);
  return { ...bus.settings };
}

/**
 * Changes the bus's backlog cap, trim slack, reaping deadlines or bound on runs held, and returns the settings now in force.
 *
 * A field left out, or given anything but a number above zero, keeps what it had: nothing here
 * could sensibly be zero. `Infinity` is accepted and means no cap, no deadline or no bound. A new
 * cap applies from the next event, a new `maxRuns` from the next run the bus takes in; new
 * deadlines apply to the runs already held.
 *
 * `maxRuns` (1000 by default) bounds how many runs the bus holds, since a run that never emits
 * `done` is otherwise kept `retainUnendedMs` (30 minutes) after its last event. Past it the
 * run that ended longest ago goes first, then the unended run quiet longest; a watcher of a
 * dropped run hands out what it had queued and ends, one of an unended run after a `notice`
 * with `runDropped: true`.
 *
 * @param options - The settings to change.
 * @returns The whole set in force after the call.
 * @example
 * configureEvents({ maxEvents: 500, retainUnendedMs: 10 * 60_000 });
 */
export function configureEvents(options?: Partial<EventSettings>): EventSettings {
  return configureEventsIn(defaultState, options);
}

/**
 * Forgets every run, ends every watcher, stops the sweep and puts the defaults back; the state-taking form of {@link resetEvents}.
 * @internal
 */
export function resetEventsIn(state: RuntimeState): void {
  const bus = slotOf(state, EVENT_BUS);
  clearBus(bus);
  closeFollowersIn(state);
  bus.settings = { ...EVENT_DEFAULTS };
}

/**
 * Forgets every run, ends every watcher, stops the sweep's timer and restores the default settings.
 *
 * For tests and teardown; `resetAll` does the same through the state registry.
 */
export function resetEvents(): void {
  resetEventsIn(defaultState);
}

/**
 * Collapses a run's token stream into display blocks: each run of consecutive `output` or `thinking` events becomes one event with the text joined.
 *
 * A merged block carries the `seq` and `at` of its last event, so a client that asks for what
 * came after a block resumes exactly behind it. Every other event is passed through as it is.
 * The events given are not changed; a merged block is a new object.
 *
 * @param events - Events in seq order, as {@link history} or a watcher hands them out.
 * @returns The blocks, in order.
 */
export function fold(events: readonly RunEvent[]): RunEvent[] {
  const blocks: RunEvent[] = [];
  if (!Array.isArray(events)) return blocks;
  let parts: string[] = [];
  let open: TextEvent | undefined;
  let last: TextEvent | undefined;
  const close = () => {
    if (open === undefined || last === undefined) return;
    blocks.push(parts.length === 1 ? open : { ...open, text: parts.join(""), seq: last.seq, at: last.at });
    open = undefined;
    last = undefined;
    parts = [];
  };
  for (const event of events) {
    if (event === null || typeof event !== "object") continue;
    if (event.kind === "output" || event.kind === "thinking") {
      if (open !== undefined && open.kind !== event.kind) close();
      if (open === undefined) open = event;
      last = event;
      parts.push(typeof event.text === "string" ? event.text : "");
      continue;
    }
    close();
    blocks.push(event);
  }
  close();
  return blocks;
}
