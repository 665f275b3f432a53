/**
 * @module run/event-bus
 * The event bus's insides: its per-runtime state, the sweep that reaps old runs, and the
 * watcher that drains one run for one reader.
 *
 * `events` holds the public functions built on these.
 */

import { RunReader } from "./run-reader.js";
import { defineSlot } from "../state/state.js";
import type { EventSettings, RunEvent } from "../shapes/event-types.js";

/** The settings a new bus starts with, and `resetEvents` puts back. */
export const EVENT_DEFAULTS: Readonly<EventSettings> = Object.freeze({
  maxEvents: 1000,
  trimSlack: 256,
  retainMs: 60_000,
  retainUnendedMs: 30 * 60_000,
  maxRuns: 1000,
});

/** The longest delay a Node timer takes without firing at once instead. */
const LONGEST_DELAY = 2_147_483_647;

/** One run as the bus holds it. */
export interface Stream {
  seq: number;
  events: RunEvent[];
  watchers: Set<RunWatcher>;
  /** When the last event was emitted. */
  touched: number;
  /** When the run ended (`done` or `endRun`); absent while it runs. */
  endedAt?: number | undefined;
  /** Whether a process warning has said that this ended run drops what is emitted for it. */
  dropWarned?: boolean | undefined;
}

/** The bus of one runtime: its runs, its settings and the sweep's timer. */
export interface Bus {
  streams: Map<string, Stream>;
  settings: EventSettings;
  timer: ReturnType<typeof setTimeout> | undefined;
  timerAt: number;
}

/** Makes an empty bus with the default settings. */
function createBus(): Bus {
  return { streams: new Map(), settings: { ...EVENT_DEFAULTS }, timer: undefined, timerAt: Infinity };
}

/** Stops the sweep, forgets every run and ends every watcher. */
export function clearBus(bus: Bus): void {
  if (bus.timer !== undefined) clearTimeout(bus.timer);
  bus.timer = undefined;
  bus.timerAt = Infinity;
  const streams = [...bus.streams.values()];
  bus.streams.clear();
  for (const stream of streams) for (const watcher of [...stream.watchers]) watcher.close();
}

/** The event bus and its settings, one per runtime state. */
export const EVENT_BUS = defineSlot<Bus>("events", createBus, clearBus);

/** The run the bus drops first to make room: the one ended longest ago, else the unended one quiet longest. */
function runToDrop(bus: Bus, keep: Stream): [string, Stream] | undefined {
  let ended: [string, Stream] | undefined;
  let unended: [string, Stream] | undefined;
  for (const pair of bus.streams) {
    const stream = pair[1];
    if (stream === keep) continue;
    if (stream.endedAt !== undefined) {
      if (ended === undefined || stream.endedAt < (ended[1].endedAt as number)) ended = pair;
    } else if (unended === undefined || stream.touched < unended[1].touched) unended = pair;
  }
  return ended ?? unended;
}

/** The notice a watcher reads in place of `dropped` events lost just before `next`. */
export function gapNotice(dropped: number, next: RunEvent): RunEvent {
  return Object.freeze({
    kind: "notice",
    text: `${dropped} event${dropped === 1 ? " was" : "s were"} dropped here: this watcher fell too far behind.`,
    dropped,
    seq: next.seq - 1,
    at: next.at,
  });
}

/** The notice a watcher of a run dropped before it ended reads last. */
export function runDroppedNotice(runId: string, stream: Stream, maxRuns: number): RunEvent {
  return Object.freeze({
    kind: "notice",
    text: `Run "${runId}" was dropped from the event bus before it ended, since the bus holds at most ${maxRuns} runs; nothing more of it comes to this watcher.`,
    runDropped: true,
    seq: stream.seq + 1,
    at: Date.now(),
  });
}

/**
 * Files a new run on the bus, dropping the oldest runs past `maxRuns` (ended ones first): their
 * watchers hand out what they queued and end, those of an unended run after a `runDropped` notice.
 */
export function fileRun(bus: Bus, runId: string, stream: Stream): void {
  bus.streams.set(runId, stream);
  const maxRuns = count(bus.settings.maxRuns);
  while (bus.streams.size > maxRuns) {
    const victim = runToDrop(bus, stream);
    if (victim === undefined) return;
    const [droppedId, dropped] = victim;
    bus.streams.delete(droppedId);
    const notice = dropped.endedAt === undefined ? runDroppedNotice(droppedId, dropped, maxRuns) : undefined;
    for (const watcher of [...dropped.watchers]) watcher.close(notice);
    dropped.watchers.clear();
  }
}

/** When an unwatched run becomes reapable. */
export function deadlineOf(stream: Stream, settings: EventSettings): number {
  return stream.endedAt !== undefined ? stream.endedAt + settings.retainMs : stream.touched + settings.retainUnendedMs;
}

/** Makes sure the sweep runs by `deadline`, moving the timer earlier if it was set later. */
export function scheduleSweep(bus: Bus, deadline: number): void {
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
export function rescheduleSweep(bus: Bus): void {
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
export const count = (value: number) => (value === Infinity ? Infinity : Math.max(1, Math.floor(value)));

/** One subscriber: a capped queue of its own, drained by `next()`. */
export class RunWatcher extends RunReader {
  /** Events lost since the last one handed out; reported once, before the next. */
  private dropped = 0;
  private stream: Stream | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly runId: string,
    signal: AbortSignal | undefined,
    private readonly after: number,
  ) {
    super(signal);
  }

  /** Subscribes on first read: replays what the run kept after `after`, then listens. */
  protected start(): void {
    let stream = this.bus.streams.get(this.runId);
    if (stream === undefined) {
      stream = { seq: 0, events: [], watchers: new Set(), touched: Date.now() };
      fileRun(this.bus, this.runId, stream);
    }
    this.stream = stream;
    const kept = stream.events;
    const from = kept.findIndex((event) => event.seq > this.after);
    if (from >= 0) for (const event of kept.slice(from)) this.queue.enqueue(event);
    const first = this.queue.peek();
    const expected = Math.max(this.after, 0) + 1;
    if (first !== undefined && first.seq > expected) this.dropped = first.seq - expected;
    this.cap();
    stream.watchers.add(this);
    if (stream.endedAt !== undefined) this.queue.end();
  }

  /** The gap notice owed before `next`, handed out once in its place. */
  protected gapBefore(next: RunEvent): RunEvent | undefined {
    if (this.dropped === 0) return undefined;
    const dropped = this.dropped;
    this.dropped = 0;
    return gapNotice(dropped, next);
  }

  /** Cuts the unread queue back to the cap once it runs past cap plus slack, counting what went. */
  private cap(): void {
    const max = count(this.bus.settings.maxEvents);
    const unread = this.queue.unread;
    if (unread <= max + count(this.bus.settings.trimSlack)) return;
    this.dropped += this.queue.dropOldest(unread - max).length;
  }

  /** Called by the bus for each event the run emits. */
  push(event: RunEvent): void {
    if (this.queue.isFinished || event.seq <= this.after) return;
    this.queue.enqueue(event);
    this.cap();
    this.queue.deliver();
  }

  /** Called by the bus when the run is dropped: what is queued is still handed out, then `last` where given. */
  close(last?: RunEvent): void {
    if (this.queue.isFinished) return;
    if (last !== undefined) this.queue.enqueue(last);
    if (this.stream !== undefined) this.stream.watchers.delete(this);
    this.queue.end();
  }

  /** What finishing lets go of: the run, which becomes reapable once no one watches it. */
  protected release(): void {
    const stream = this.stream;
    this.stream = undefined;
    if (stream !== undefined && stream.watchers.delete(this) && stream.watchers.size === 0) {
      if (this.bus.streams.get(this.runId) === stream) {
        if (stream.seq === 0 && stream.endedAt === undefined) this.bus.streams.delete(this.runId);
        else scheduleSweep(this.bus, Math.max(deadlineOf(stream, this.bus.settings), Date.now()));
      }
    }
  }
}
