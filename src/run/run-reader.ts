/**
 * @module run/run-reader
 * What both run watchers share (of a run this bus holds, and of one followed through a backend):
 * a queue read as an async iterator, started on the first read, and finished by the run's
 * `done`, by `return()` or by the reader's signal.
 */

import { AsyncQueue } from "./async-queue.js";
import type { RunEvent } from "../shapes/event-types.js";

const DONE: IteratorResult<RunEvent> = Object.freeze({ done: true, value: undefined });

/**
 * A run's events as an async iterator over a queue of their own. A subclass says how the run is
 * started on ({@link start}), what gap notice goes before an event ({@link gapBefore}) and what
 * finishing lets go of ({@link release}); the abort listener is this class's. @internal
 */
export abstract class RunReader implements AsyncIterableIterator<RunEvent> {
  protected readonly queue = new AsyncQueue<RunEvent>({
    interpose: (next) => this.gapBefore(next),
    taken: (event) => {
      if (event.kind === "done") this.finish();
    },
    finished: () => {
      this.signal?.removeEventListener("abort", this.onAbort);
      this.release();
    },
  });
  private started = false;
  private readonly onAbort = () => this.finish();

  protected constructor(protected readonly signal: AbortSignal | undefined) {}

  [Symbol.asyncIterator](): AsyncIterableIterator<RunEvent> {
    return this;
  }

  next(): Promise<IteratorResult<RunEvent>> {
    if (!this.started) {
      this.started = true;
      if (this.signal?.aborted) this.queue.finish();
      else {
        this.start();
        // Listened for only while the reader is open; a start that finished it has released it.
        if (!this.queue.isFinished) this.signal?.addEventListener("abort", this.onAbort, { once: true });
      }
    }
    return this.queue.next();
  }

  return(): Promise<IteratorResult<RunEvent>> {
    this.finish();
    return Promise.resolve(DONE);
  }

  /** Stops reading: releases the queue and ends every pending read. */
  protected finish(): void {
    this.queue.finish();
  }

  /** Starts on the run, on the first read of a reader whose signal has not fired. */
  protected abstract start(): void;

  /** The gap notice owed before `next`, handed out once in its place; undefined for none. */
  protected abstract gapBefore(next: RunEvent): RunEvent | undefined;

  /** What finishing lets go of besides the abort listener. */
  protected abstract release(): void;
}
