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

import { RunReader } from "./run-reader.js";
import { count, EVENT_BUS, gapNotice, type Bus } from "./event-bus.js";
import type { RunEvent } from "../shapes/event-types.js";
import type { BackendLink } from "../state/backend.js";
import { slotOf, type RuntimeState } from "../state/state.js";

/** One watcher of a run read through a backend: its own capped queue, drained by `next()`. */
class FollowedRun extends RunReader {
  /** How many events went missing just before the queued event of each seq, where any did. */
  private readonly gaps = new Map<number, number>();
  /** The last seq taken in, for spotting gaps and repeats. */
  private last: number;
  /** The run ended: nothing more is taken in. */
  private closed = false;
  private unfollow: (() => void) | undefined;

  constructor(
    private readonly link: BackendLink,
    private readonly bus: Bus,
    private readonly runId: string,
    signal: AbortSignal | undefined,
    private readonly after: number,
  ) {
    super(signal);
    this.last = Math.max(after, 0);
  }

  /** Follows the run on first read. */
  protected start(): void {
    this.link.followers.add(this);
    let unfollow: (() => void) | undefined;
    try {
      unfollow = this.link.backend.followRun(this.runId, this.after, {
        events: (batch) => this.receive(batch),
        ended: () => this.close(),
      });
    } catch {
      this.close();
    }
    if (this.queue.isFinished) unfollow?.();
    else this.unfollow = unfollow;
  }

  /** Takes events from the backend, noting any gap before each. */
  private receive(batch: readonly RunEvent[]): void {
    if (this.queue.isFinished || this.closed || !Array.isArray(batch)) return;
    for (const event of batch) {
      if (event === null || typeof event !== "object" || typeof event.seq !== "number" || event.seq <= this.last) continue;
      if (event.seq - this.last > 1) this.gaps.set(event.seq, event.seq - this.last - 1);
      this.queue.enqueue(Object.isFrozen(event) ? event : Object.freeze(event));
      this.last = event.seq;
      if (event.kind === "done") this.closed = true;
    }
    this.cap();
    if (this.closed) this.queue.end();
    else this.queue.deliver();
  }

  /** The gap notice owed before `next`, handed out once in its place. */
  protected gapBefore(next: RunEvent): RunEvent | undefined {
    const gap = this.gaps.get(next.seq);
    if (gap === undefined) return undefined;
    this.gaps.delete(next.seq);
    return gapNotice(gap, next);
  }

  /** Cuts the unread queue back to the cap once it runs past cap plus slack, counting what went. */
  private cap(): void {
    const max = count(this.bus.settings.maxEvents);
    const unread = this.queue.unread;
    if (unread <= max + count(this.bus.settings.trimSlack)) return;
    let lost = 0;
    for (const event of this.queue.dropOldest(unread - max)) {
      lost += 1 + (this.gaps.get(event.seq) ?? 0);
      this.gaps.delete(event.seq);
    }
    // What went is told as a gap before the oldest event left (the cap is at least one, so one is).
    const first = this.queue.peek();
    if (first !== undefined) this.gaps.set(first.seq, (this.gaps.get(first.seq) ?? 0) + lost);
  }

  /** Ends the following: what is queued is still handed out. */
  close(): void {
    if (this.queue.isFinished) return;
    this.closed = true;
    this.queue.end();
  }

  /** What finishing lets go of: the gaps and the backend's following. */
  protected release(): void {
    this.gaps.clear();
    this.link.followers.delete(this);
    const unfollow = this.unfollow;
    this.unfollow = undefined;
    try {
      unfollow?.();
    } catch {
      // A backend that fails to stop following costs it a little work, not the reader.
    }
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
