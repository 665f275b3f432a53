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

import { defaultState, defineSlot, slotOf, type RuntimeState } from "./internal/state.js";
import type { RunEvent, RunEventInput } from "./internal/event-types.js";

export type {
  CacheBreakReason,
  RunEvent,
  RunEventInput,
  RunEventKind,
  RunOutcome,
  RunTotals,
  TurnContextShares,
  TurnMetrics,
  UsageLedgerEntry,
} from "./internal/event-types.js";
export { runMetrics, type RunMetrics, type RunMetricsOptions } from "./internal/run-metrics.js";

/** The bus's four numbers: the backlog cap, the slack it is trimmed by, and the two reaping deadlines. */
export interface EventSettings {
  /**
   * The most recent events a run's backlog and each watcher's queue hold.
   * @default 1000
   */
  maxEvents: number;
  /**
   * How far past `maxEvents` a backlog or queue may run before it is cut back to `maxEvents`.
   * @default 256
   */
  trimSlack: number;
  /**
   * How long a run stays readable after its `done` event (or `endRun`), in milliseconds.
   * @default 60000
   */
  retainMs: number;
  /**
   * How long a run that has not ended is kept after its last event, in milliseconds.
   * @default 1800000
   */
  retainUnendedMs: number;
}

/** The defaults `resetEvents` puts back. */
const EVENT_DEFAULTS: Readonly<EventSettings> = Object.freeze({
  maxEvents: 1000,
  trimSlack: 256,
  retainMs: 60_000,
  retainUnendedMs: 30 * 60_000,
});

/** The longest delay a Node timer takes without firing at once instead. */
const LONGEST_DELAY = 2_147_483_647;

/** Options for {@link watch} and {@link history}. */
export interface ReplayOptions {
  /** Replay only events after this seq (a client resuming); absent or not a number replays everything kept. */
  after?: number;
}

interface Stream {
  seq: number;
  events: RunEvent[];
  watchers: Set<RunWatcher>;
  /** When the last event was emitted. */
  touched: number;
  /** When the run ended (`done` or `endRun`); absent while it runs. */
  endedAt?: number;
}

interface Bus {
  streams: Map<string, Stream>;
  settings: EventSettings;
  timer: ReturnType<typeof setTimeout> | undefined;
  timerAt: number;
}

function createBus(): Bus {
  return { streams: new Map(), settings: { ...EVENT_DEFAULTS }, timer: undefined, timerAt: Infinity };
}

function clearBus(bus: Bus): void {
  if (bus.timer !== undefined) clearTimeout(bus.timer);
  bus.timer = undefined;
  bus.timerAt = Infinity;
  const streams = [...bus.streams.values()];
  bus.streams.clear();
  for (const stream of streams) for (const watcher of [...stream.watchers]) watcher.close();
}

/** The event bus and its settings, one per runtime state. */
const EVENT_BUS = defineSlot<Bus>("events", createBus, clearBus);

function deadlineOf(stream: Stream, settings: EventSettings): number {
  return stream.endedAt !== undefined
    ? stream.endedAt + settings.retainMs
    : stream.touched + settings.retainUnendedMs;
}

/** Makes sure the sweep runs by `deadline`, moving the timer earlier if it was set later. */
function scheduleSweep(bus: Bus, deadline: number): void {
  if (bus.timer !== undefined && bus.timerAt <= deadline) return;
  if (bus.timer !== undefined) clearTimeout(bus.timer);
  const delay = Math.min(Math.max(0, deadline - Date.now()), LONGEST_DELAY);
  bus.timerAt = Date.now() + delay;
  const timer = setTimeout(() => sweep(bus), delay);
  timer.unref?.();
  bus.timer = timer;
}

/** Reaps every unwatched run past its deadline, then sets the timer for the next one due. */
function sweep(bus: Bus): void {
  bus.timer = undefined;
  bus.timerAt = Infinity;
  const now = Date.now();
  let next = Infinity;
  for (const [runId, stream] of bus.streams) {
    if (stream.watchers.size > 0) continue;
    const deadline = deadlineOf(stream, bus.settings);
    if (deadline <= now) bus.streams.delete(runId);
    else if (deadline < next) next = deadline;
  }
  if (next !== Infinity) scheduleSweep(bus, next);
}

/** Resets the timer against every unwatched run's deadline, after the deadlines moved. */
function rescheduleSweep(bus: Bus): void {
  if (bus.timer !== undefined) clearTimeout(bus.timer);
  bus.timer = undefined;
  bus.timerAt = Infinity;
  let next = Infinity;
  for (const stream of bus.streams.values()) {
    if (stream.watchers.size === 0) next = Math.min(next, deadlineOf(stream, bus.settings));
  }
  if (next !== Infinity) scheduleSweep(bus, next);
}

/** A whole number of at least one, from a setting already known to be a positive number. */
const count = (value: number) => (value === Infinity ? Infinity : Math.max(1, Math.floor(value)));

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
    if (stream?.endedAt !== undefined) return undefined;
    // Built before the run is filed, so an input whose getters throw leaves nothing behind.
    const stamped = Object.freeze({ ...event, seq: (stream?.seq ?? 0) + 1, at: now }) as RunEvent;
    if (stream === undefined) {
      stream = { seq: 0, events: [], watchers: new Set(), touched: now };
      bus.streams.set(runId, stream);
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
 * answered with `undefined`.
 *
 * @param runId The run the event belongs to.
 * @param event The event without its `seq` and `at`.
 * @returns The event as stored (frozen), or `undefined` where it was dropped.
 * @example
 * emit(runId, { kind: "output", text: "Hello" });
 */
export function emit(runId: string, event: RunEventInput): RunEvent | undefined {
  return emitIn(defaultState, runId, event);
}

/** One subscriber: a capped queue of its own, drained by `next()`. */
class RunWatcher implements AsyncIterableIterator<RunEvent> {
  private queue: RunEvent[] = [];
  private head = 0;
  /** Events lost since the last one handed out; reported once, before the next. */
  private dropped = 0;
  private waiting: ((result: IteratorResult<RunEvent>) => void)[] = [];
  private started = false;
  private finished = false;
  /** The run was dropped: hand out what is queued, then finish. */
  private closed = false;
  private stream: Stream | undefined;
  private readonly onAbort = () => this.finish();

  constructor(
    private readonly bus: Bus,
    private readonly runId: string,
    private readonly signal: AbortSignal | undefined,
    private readonly after: number,
  ) {}

  [Symbol.asyncIterator](): AsyncIterableIterator<RunEvent> {
    return this;
  }

  next(): Promise<IteratorResult<RunEvent>> {
    if (!this.started) this.start();
    if (this.finished) return Promise.resolve({ done: true, value: undefined });
    if (this.head < this.queue.length) return Promise.resolve({ done: false, value: this.take() });
    if (this.closed) {
      this.finish();
      return Promise.resolve({ done: true, value: undefined });
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  return(): Promise<IteratorResult<RunEvent>> {
    this.finish();
    return Promise.resolve({ done: true, value: undefined });
  }

  /** Subscribes on first read: replays what the run kept after `after`, then listens. */
  private start(): void {
    this.started = true;
    if (this.signal?.aborted) {
      this.finished = true;
      return;
    }
    let stream = this.bus.streams.get(this.runId);
    if (stream === undefined) {
      stream = { seq: 0, events: [], watchers: new Set(), touched: Date.now() };
      this.bus.streams.set(this.runId, stream);
    }
    this.stream = stream;
    const kept = stream.events;
    let from = 0;
    while (from < kept.length && (kept[from] as RunEvent).seq <= this.after) from++;
    this.queue = kept.slice(from);
    const first = this.queue[0];
    const expected = Math.max(this.after, 0) + 1;
    if (first !== undefined && first.seq > expected) this.dropped = first.seq - expected;
    this.cap();
    if (stream.endedAt !== undefined) this.closed = true;
    stream.watchers.add(this);
    this.signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  /** Takes the next item off the queue: the gap notice if one is owed, else the next event. */
  private take(): RunEvent {
    const event = this.queue[this.head] as RunEvent;
    if (this.dropped > 0) {
      const dropped = this.dropped;
      this.dropped = 0;
      return Object.freeze({
        kind: "notice",
        text: `${dropped} event${dropped === 1 ? " was" : "s were"} dropped here: this watcher fell too far behind.`,
        dropped,
        seq: event.seq - 1,
        at: event.at,
      });
    }
    this.head++;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head >= count(this.bus.settings.maxEvents)) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    if (event.kind === "done") this.finish();
    return event;
  }

  /** Cuts the unread queue back to the cap once it runs past cap plus slack, counting what went. */
  private cap(): void {
    const max = count(this.bus.settings.maxEvents);
    const unread = this.queue.length - this.head;
    if (unread <= max + count(this.bus.settings.trimSlack)) return;
    const cut = unread - max;
    this.queue = this.queue.slice(this.head + cut);
    this.head = 0;
    this.dropped += cut;
  }

  /** Called by the bus for each event the run emits. */
  push(event: RunEvent): void {
    if (this.finished || event.seq <= this.after) return;
    const resolve = this.waiting.shift();
    if (resolve !== undefined) {
      if (event.kind === "done") this.finish();
      resolve({ done: false, value: event });
      return;
    }
    this.queue.push(event);
    this.cap();
  }

  /** Called by the bus when the run is dropped: what is queued is still handed out. */
  close(): void {
    this.closed = true;
    if (this.stream !== undefined) this.stream.watchers.delete(this);
    if (this.waiting.length > 0 || this.head >= this.queue.length) this.finish();
  }

  /** Stops listening, releases the queue and ends every pending read. */
  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.queue = [];
    this.head = 0;
    this.signal?.removeEventListener("abort", this.onAbort);
    const stream = this.stream;
    this.stream = undefined;
    if (stream !== undefined && stream.watchers.delete(this) && stream.watchers.size === 0) {
      if (this.bus.streams.get(this.runId) === stream) {
        if (stream.seq === 0 && stream.endedAt === undefined) this.bus.streams.delete(this.runId);
        else scheduleSweep(this.bus, Math.max(deadlineOf(stream, this.bus.settings), Date.now()));
      }
    }
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve({ done: true, value: undefined });
  }
}

/**
 * Streams a run's events to one watcher; the state-taking form of {@link watch}.
 * @internal
 */
export function watchIn(
  state: RuntimeState,
  runId: string,
  signal?: AbortSignal,
  options: ReplayOptions = {},
): AsyncIterableIterator<RunEvent> {
  const after = typeof options?.after === "number" && Number.isFinite(options.after) ? options.after : 0;
  return new RunWatcher(slotOf(state, EVENT_BUS), String(runId), signal, after);
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
 * It finishes after `done`, when the run is dropped ({@link endRun}, a reset), and — at once, even
 * while waiting for the next event — when `signal` aborts or `return()` is called. A watcher
 * still attached keeps its run from being reaped, so pass a signal for anything that can go away.
 * Watching a run that has not started waits for it.
 *
 * @param runId The run to watch.
 * @param signal Ends the watch early.
 * @param options `after` resumes after a seq the client already has.
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
 * @param runId The run to read.
 * @param options `after` returns only the events after that seq.
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
 * @param runId The run to drop.
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
 * Changes the bus's backlog cap, trim slack or reaping deadlines, and returns the settings now in force.
 *
 * A field left out, or given anything but a number above zero, keeps what it had: nothing here
 * could sensibly be zero. `Infinity` is accepted and means no cap or no deadline. A new cap
 * applies from the next event; new deadlines apply to the runs already held.
 *
 * @param options The settings to change.
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
 * @param events Events in seq order, as {@link history} or a watcher hands them out.
 * @returns The blocks, in order.
 */
export function fold(events: readonly RunEvent[]): RunEvent[] {
  const blocks: RunEvent[] = [];
  if (!Array.isArray(events)) return blocks;
  let parts: string[] = [];
  let open: RunEvent | undefined;
  let last: RunEvent | undefined;
  const close = () => {
    if (open === undefined || last === undefined) return;
    blocks.push(parts.length === 1 ? open : { ...open, text: parts.join(""), seq: last.seq, at: last.at } as RunEvent);
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
