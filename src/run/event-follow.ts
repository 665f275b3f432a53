/**
 * @module run/event-follow
 * The watcher of a run this replica does not hold: it reads the run through the runtime's
 * backend, replayed from the start and then followed, with the in-memory watcher's queue cap
 * and gap notices.
 *
 * The backend hands the events over in the order it stored them; a `seq` that jumps is a gap
 * (events trimmed past the stream's cap, or lost while the backend was unreachable) and is told
 * to the reader once, as one `notice` whose `dropped` says how many went, just as the in-memory
 * watcher tells a gap.
 */

import { count, EVENT_BUS, type Bus } from "./event-bus.js";
import type { RunEvent } from "../shapes/event-types.js";
import type { BackendLink } from "../state/backend.js";
import { slotOf, type RuntimeState } from "../state/state.js";

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

/** One watcher of a run read through a backend: its own capped queue, drained by `next()`. */
class FollowedRun implements AsyncIterableIterator<RunEvent> {
  private queue: RunEvent[] = [];
  /** How many events went missing just before the queued event at the same index. */
  private gaps: number[] = [];
  private head = 0;
  /** The last seq taken in, for spotting gaps and repeats. */
  private last: number;
  private waiting: ((result: IteratorResult<RunEvent>) => void)[] = [];
  private started = false;
  private finished = false;
  /** The run ended: hand out what is queued, then finish. */
  private closed = false;
  private unfollow: (() => void) | undefined;
  private readonly onAbort = () => this.finish();

  constructor(
    private readonly link: BackendLink,
    private readonly bus: Bus,
    private readonly runId: string,
    private readonly signal: AbortSignal | undefined,
    private readonly after: number,
  ) {
    this.last = Math.max(after, 0);
  }

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

  /** Follows the run on first read. */
  private start(): void {
    this.started = true;
    if (this.signal?.aborted) {
      this.finished = true;
      return;
    }
    this.link.followers.add(this);
    this.signal?.addEventListener("abort", this.onAbort, { once: true });
    let unfollow: (() => void) | undefined;
    try {
      unfollow = this.link.backend.followRun(this.runId, this.after, {
        events: (batch) => this.receive(batch),
        ended: () => this.close(),
      });
    } catch {
      this.close();
    }
    if (this.finished) unfollow?.();
    else this.unfollow = unfollow;
  }

  /** Takes events from the backend, noting any gap before each. */
  private receive(batch: readonly RunEvent[]): void {
    if (this.finished || this.closed || !Array.isArray(batch)) return;
    for (const event of batch) {
      if (event === null || typeof event !== "object" || typeof event.seq !== "number" || event.seq <= this.last) continue;
      this.gaps.push(event.seq - this.last - 1);
      this.queue.push(Object.isFrozen(event) ? event : Object.freeze(event));
      this.last = event.seq;
      if (event.kind === "done") this.closed = true;
    }
    this.cap();
    this.hand();
  }

  /** Answers waiting reads from the queue, and finishes once an ended run's queue is empty. */
  private hand(): void {
    while (this.waiting.length > 0 && this.head < this.queue.length) {
      const resolve = this.waiting.shift() as (result: IteratorResult<RunEvent>) => void;
      resolve({ done: false, value: this.take() });
    }
    if (this.closed && this.head >= this.queue.length) this.finish();
  }

  /** The next item: the gap notice owed before the next event, else the event. */
  private take(): RunEvent {
    const event = this.queue[this.head]!;
    const gap = this.gaps[this.head] as number;
    if (gap > 0) {
      this.gaps[this.head] = 0;
      return gapNotice(gap, event);
    }
    this.head++;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.gaps = [];
      this.head = 0;
    } else if (this.head >= count(this.bus.settings.maxEvents)) {
      this.queue = this.queue.slice(this.head);
      this.gaps = this.gaps.slice(this.head);
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
    const from = this.head + unread - max;
    let lost = 0;
    for (let index = this.head; index < from; index++) lost += 1 + (this.gaps[index] as number);
    this.queue = this.queue.slice(from);
    this.gaps = this.gaps.slice(from);
    this.gaps[0] = (this.gaps[0] as number) + lost;
    this.head = 0;
  }

  /** Ends the following: what is queued is still handed out. */
  close(): void {
    if (this.finished) return;
    this.closed = true;
    this.hand();
  }

  /** Stops following, releases the queue and ends every pending read. */
  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.queue = [];
    this.gaps = [];
    this.head = 0;
    this.signal?.removeEventListener("abort", this.onAbort);
    this.link.followers.delete(this);
    const unfollow = this.unfollow;
    this.unfollow = undefined;
    try {
      unfollow?.();
    } catch {
      // A backend that fails to stop following costs it a little work, not the reader.
    }
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve({ done: true, value: undefined });
  }
}

/**
 * Watches a run through the state's backend: replayed from after `after`, then followed until
 * `done`, the run's end, a reset or `signal`.
 * @internal
 */
export function followRunIn(
  state: RuntimeState,
  link: BackendLink,
  runId: string,
  signal: AbortSignal | undefined,
  after: number,
): AsyncIterableIterator<RunEvent> {
  return new FollowedRun(link, slotOf(state, EVENT_BUS), runId, signal, after);
}

/** Ends every watcher following a run through the state's backend. @internal */
export function closeFollowersIn(state: RuntimeState): void {
  for (const follower of [...(state.link?.followers ?? [])]) follower.close();
}
