/**
 * @module run/async-queue
 * The reader's queue behind a run watcher: items waiting to be read, reads waiting for items,
 * and the end after which only what is queued is still handed out.
 *
 * Both watchers (of a run this bus holds, and of one followed through a backend) are built on
 * it; each adds its own cap, gap notices and clean-up through the hooks.
 */

/** What a queue's owner is told, and may hand out in place of an item. */
export interface AsyncQueueHooks<T> {
  /** Something to hand out in place of `next`, which stays first in line (a gap notice); undefined for none. */
  readonly interpose?: (next: T) => T | undefined;
  /** Told of each item as it is taken off the queue and handed out. */
  readonly taken?: ((item: T) => void) | undefined;
  /** Told once, when the queue finishes, before the waiting reads are answered. */
  readonly finished?: (() => void) | undefined;
}

/** How far the read position may run before the array is cut back to what is unread. */
const COMPACT_AT = 1024;

const DONE: IteratorResult<never> = Object.freeze({ done: true, value: undefined });

/** A queue of items drained by `next()`, as an async iterator's reads. */
export class AsyncQueue<T> {
  private items: T[] = [];
  private head = 0;
  private readers: ((result: IteratorResult<T>) => void)[] = [];
  private ending = false;
  private over = false;

  constructor(private readonly hooks: AsyncQueueHooks<T> = {}) {}

  /** How many items wait to be read. */
  get unread(): number {
    return this.items.length - this.head;
  }

  /** Whether the queue finished: every read from now on is done. */
  get isFinished(): boolean {
    return this.over;
  }

  /** The next item to be read, without taking it. */
  peek(): T | undefined {
    return this.unread > 0 ? this.items[this.head] : undefined;
  }

  /** Queues an item without answering waiting reads; {@link deliver} does that. */
  enqueue(item: T): void {
    if (!this.over && !this.ending) this.items.push(item);
  }

  /** Answers waiting reads from the queue, and finishes an ended queue once nothing is left. */
  deliver(): void {
    while (!this.over && this.readers.length > 0 && this.unread > 0) {
      const reader = this.readers.shift() as (result: IteratorResult<T>) => void;
      reader({ done: false, value: this.take() });
    }
    if (this.ending && this.unread === 0) this.finish();
  }

  /** Queues an item and answers a waiting read with it. */
  push(item: T): void {
    this.enqueue(item);
    this.deliver();
  }

  /** Takes the `count` oldest unread items off the queue and returns them. */
  dropOldest(count: number): T[] {
    const cut = this.items.slice(this.head, this.head + count);
    this.items = this.items.slice(this.head + cut.length);
    this.head = 0;
    return cut;
  }

  /** The next read: an item, or a wait for one, or done once the queue finished. */
  next(): Promise<IteratorResult<T>> {
    if (this.over) return Promise.resolve(DONE);
    if (this.unread > 0) return Promise.resolve({ done: false, value: this.take() });
    if (this.ending) {
      this.finish();
      return Promise.resolve(DONE);
    }
    return new Promise((resolve) => this.readers.push(resolve));
  }

  /** Nothing more will be queued: what is queued is still handed out, then the queue finishes. */
  end(): void {
    if (this.over) return;
    this.ending = true;
    this.deliver();
  }

  /** Finishes now: releases what is queued and answers every waiting read with done. */
  finish(): void {
    if (this.over) return;
    this.over = true;
    this.items = [];
    this.head = 0;
    const readers = this.readers;
    this.readers = [];
    this.hooks.finished?.();
    for (const reader of readers) reader(DONE);
  }

  /** Takes the next item off the queue, or what the owner hands out in its place. */
  private take(): T {
    // Only called while an item is unread.
    const next = this.items[this.head] as T;
    const instead = this.hooks.interpose?.(next);
    if (instead !== undefined) return instead;
    this.head += 1;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= COMPACT_AT && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    this.hooks.taken?.(next);
    return next;
  }
}
