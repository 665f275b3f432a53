/**
 * @module redis/event-reader
 * Follows the runs this replica's watchers read through Redis, all of them over one connection:
 * one blocking read names every followed stream with the last id each has seen, and hands what
 * comes back to the watchers of each.
 *
 * A watcher that starts while the read is blocked is picked up at once: the backend adds an
 * entry to a wake stream of its own, which the blocking read always names, so the read returns
 * and is sent again with the new stream in it. A read sent after the wake entry was written
 * returns at once too, so there is no window in which a new watcher waits for the block to end.
 */

import type { RunEvent, RunFollower } from "../index.js";
import { pause, send, whenReady, type RedisConnection, type Reply } from "./connection.js";
import { runKey, type RedisSettings } from "./options.js";

/** One watcher's following of one run. */
interface Follow {
  readonly key: string;
  readonly follower: RunFollower;
  /** The id of the last entry handed over, as its two numbers. */
  last: [number, number];
  active: boolean;
}

/** A stream id's two numbers; an unreadable id reads as the lowest. */
function idOf(text: string): [number, number] {
  const [high, low] = text.split("-");
  const first = Number(high);
  const second = Number(low ?? 0);
  return Number.isFinite(first) && Number.isFinite(second) ? [first, second] : [0, 0];
}

const after = (a: [number, number], b: [number, number]): boolean => a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);

/** An entry's field-value list as a lookup. */
function fieldsOf(values: Reply): Map<string, string> {
  const fields = new Map<string, string>();
  if (!Array.isArray(values)) return fields;
  for (let index = 0; index + 1 < values.length; index += 2) fields.set(String(values[index]), String(values[index + 1]));
  return fields;
}

/** The backend's following of runs. */
export class EventReader {
  private readonly follows = new Set<Follow>();
  private running = false;
  /** A wake entry was written that the read in flight has not answered yet. */
  private waking = false;
  private wakeId = "0-0";
  private readonly wakeKey: string;

  constructor(
    private readonly reader: RedisConnection,
    private readonly writer: RedisConnection,
    private readonly settings: RedisSettings,
    private readonly stop: AbortSignal,
    instance: string,
  ) {
    this.wakeKey = `${settings.prefix}wake:${instance}`;
  }

  /** Follows a run from after `after`; the returned function stops it. */
  follow(runId: string, after: number, follower: RunFollower): () => void {
    if (this.stop.aborted) {
      follower.ended();
      return () => undefined;
    }
    const follow: Follow = { key: runKey(this.settings.prefix, runId), follower, last: [0, Math.max(0, Math.floor(after))], active: true };
    this.follows.add(follow);
    if (this.running) this.wake();
    else void this.loop();
    return () => {
      follow.active = false;
      this.follows.delete(follow);
    };
  }

  /** Ends every following: each watcher is told its run ended, and the loop stops. */
  close(): void {
    for (const follow of [...this.follows]) this.release(follow, true);
  }

  /** The key of the wake stream, for the backend to delete on close. */
  get wakeStream(): string {
    return this.wakeKey;
  }

  /** Makes the blocking read return, so it is sent again naming the new run. */
  private wake(): void {
    if (this.waking || !this.writer.isReady) return;
    this.waking = true;
    send(this.writer, ["XADD", this.wakeKey, "MAXLEN", "1", "*", "w", "1"])
      .then(() => send(this.writer, ["PEXPIRE", this.wakeKey, String(this.settings.blockMs * 4 + 60_000)]))
      .catch(() => {
        this.waking = false;
      });
  }

  private release(follow: Follow, ended: boolean): void {
    if (!follow.active) return;
    follow.active = false;
    this.follows.delete(follow);
    if (ended) {
      try {
        follow.follower.ended();
      } catch {
        // The watcher's own failure is not the reader's.
      }
    }
  }

  /** Reads every followed stream until nothing is followed or the backend closes. */
  private async loop(): Promise<void> {
    this.running = true;
    try {
      while (this.follows.size > 0 && !this.stop.aborted) {
        if (!this.reader.isReady) {
          await whenReady(this.reader, this.stop);
          continue;
        }
        const from = new Map<string, [number, number]>();
        for (const follow of this.follows) {
          const seen = from.get(follow.key);
          if (seen === undefined || after(seen, follow.last)) from.set(follow.key, follow.last);
        }
        this.waking = false;
        const keys = [...from.keys()];
        const ids = keys.map((key) => (from.get(key) as [number, number]).join("-"));
        let reply: Reply;
        try {
          reply = await send(this.reader, [
            "XREAD",
            "COUNT",
            String(this.settings.batchSize),
            "BLOCK",
            String(this.settings.blockMs),
            "STREAMS",
            this.wakeKey,
            ...keys,
            this.wakeId,
            ...ids,
          ]);
        } catch {
          if (this.stop.aborted) break;
          // The connection went, or the server refused the read: wait for it rather than spin.
          if (this.reader.isReady) await pause(100, this.stop);
          continue;
        }
        this.hand(reply);
      }
    } finally {
      this.running = false;
    }
  }

  /** Hands each followed stream's new entries to its watchers. */
  private hand(reply: Reply): void {
    if (!Array.isArray(reply)) return;
    for (const stream of reply) {
      if (!Array.isArray(stream) || typeof stream[0] !== "string" || !Array.isArray(stream[1])) continue;
      const [key, entries] = stream as [string, Reply[]];
      if (key === this.wakeKey) {
        const last = entries[entries.length - 1];
        if (Array.isArray(last) && typeof last[0] === "string") this.wakeId = last[0];
        continue;
      }
      for (const follow of [...this.follows]) if (follow.key === key) this.handTo(follow, entries);
    }
  }

  private handTo(follow: Follow, entries: readonly Reply[]): void {
    const batch: RunEvent[] = [];
    let ended = false;
    let done = false;
    for (const entry of entries) {
      if (!Array.isArray(entry) || typeof entry[0] !== "string") continue;
      const id = idOf(entry[0]);
      if (!after(id, follow.last)) continue;
      follow.last = id;
      const fields = fieldsOf(entry[1] ?? null);
      if (fields.has("end")) {
        ended = true;
        break;
      }
      const json = fields.get("e");
      if (json === undefined) continue;
      try {
        const event: RunEvent = JSON.parse(json);
        if (event !== null && typeof event === "object" && typeof event.seq === "number") {
          batch.push(event);
          if (event.kind === "done") {
            done = true;
            break;
          }
        }
      } catch {
        // An entry that is not an event is skipped; the seq that jumps past it tells the gap.
      }
    }
    if (batch.length > 0) {
      try {
        follow.follower.events(batch);
      } catch {
        // The watcher's own failure is not the reader's.
      }
    }
    if (ended) this.release(follow, true);
    else if (done) this.release(follow, false);
  }
}
