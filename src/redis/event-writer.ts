/**
 * @module redis/event-writer
 * Writes the runs' events to their streams: queued as they are emitted, sent in batches, one
 * batch at a time, so a run's events reach its stream in the order they were emitted. A batch
 * is one script call per run, which adds the run's events and sets its expiry in one step.
 *
 * Each event is stored under the stream id `0-<seq>`, so the stream's order is the run's order,
 * a replay after a seq is a read after that id, and an event written twice (a batch sent again
 * after a lost connection) is refused by the server as already there. While the server cannot
 * be written to, events wait in a bounded queue; past the bound the oldest go, which leaves a
 * jump in the run's seqs that every watcher is told of.
 */

import { ErrorReply } from "redis";
import type { EventSettings, RunEvent } from "../index.js";
import { pause, send, whenReady, type RedisConnection } from "./connection.js";
import { runKey, type RedisSettings } from "./options.js";

/** One thing to write: an event, or a run's end. */
type Write =
  | {
      readonly kind: "event";
      /** The stream it goes to. */
      readonly key: string;
      /** The stream id, `0-<seq>`. */
      readonly id: string;
      readonly json: string;
      readonly done: boolean;
      /** The run's cap ("" for none) and its retention once done and while not, in milliseconds. */
      readonly maxLen: string;
      readonly retainMs: number;
      readonly retainUnendedMs: number;
    }
  | { readonly kind: "end"; readonly key: string; readonly retainMs: number };

/** A command and the writes it carries, sent again together where it is lost. */
interface Sending {
  readonly command: readonly string[];
  readonly writes: readonly Write[];
}

/**
 * Adds one run's events to its stream in one call, each under its own id and capped, then sets
 * the stream's expiry. An id the stream already holds (a batch sent again) is skipped; any other
 * refusal is returned as the error.
 */
const APPEND_SCRIPT = `
for i = 3, #ARGV, 2 do
  local reply
  if ARGV[1] ~= "" then
    reply = redis.pcall("XADD", KEYS[1], "MAXLEN", ARGV[1], ARGV[i], "e", ARGV[i + 1])
  else
    reply = redis.pcall("XADD", KEYS[1], ARGV[i], "e", ARGV[i + 1])
  end
  if type(reply) == "table" and reply.err and not string.find(reply.err, "equal or smaller", 1, true) then
    return redis.error_reply(reply.err)
  end
end
if ARGV[2] ~= "" then redis.call("PEXPIRE", KEYS[1], ARGV[2]) else redis.call("PERSIST", KEYS[1]) end
return 1`;

/** The reply Redis gives an XADD whose id is not above the stream's last: the event is already there. */
const ALREADY_THERE = /equal or smaller than the target stream top item/i;

/** A retention as the script and PEXPIRE take it: whole milliseconds, or "" for none. */
const ttlOf = (ms: number): string => (Number.isFinite(ms) ? String(Math.max(1, Math.floor(ms))) : "");

/** The command that expires a key after `ms`, or keeps it where `ms` is no finite time. */
function expiry(key: string, ms: number): string[] {
  const ttl = ttlOf(ms);
  return ttl === "" ? ["PERSIST", key] : ["PEXPIRE", key, ttl];
}

/** The events' queue and the loop that writes it. */
export class EventWriter {
  private queue: Write[] = [];
  /** How many of the queued writes are events. */
  private events = 0;
  private flushing = false;
  private scheduled = false;
  /** Events dropped from the queue since the count was last taken. */
  private dropped = 0;
  /** Reply errors already told, so each is told once. */
  private readonly told = new Set<string>();
  private idle: (() => void)[] = [];

  constructor(
    private readonly client: RedisConnection,
    private readonly settings: RedisSettings,
    private readonly stop: AbortSignal,
    private readonly notice: (text: string) => void,
  ) {}

  /** Queues a run's events, in order, behind everything queued before. */
  append(runId: string, events: readonly RunEvent[], bus: Readonly<EventSettings>): void {
    if (this.stop.aborted) return;
    const key = runKey(this.settings.prefix, runId);
    const maxLen = Number.isFinite(bus.maxEvents) ? String(Math.max(1, Math.floor(bus.maxEvents))) : "";
    for (const event of events) {
      let json: string;
      try {
        json = JSON.stringify(event);
      } catch {
        continue;
      }
      this.queue.push({
        kind: "event",
        key,
        id: `0-${event.seq}`,
        json,
        done: event.kind === "done",
        maxLen,
        retainMs: bus.retainMs,
        retainUnendedMs: bus.retainUnendedMs,
      });
      this.events += 1;
    }
    this.bound();
    this.schedule();
  }

  /** Queues the end of a run: its stream emptied, an end mark written for the watchers, and the key expired. */
  end(runId: string, bus: Readonly<EventSettings>): void {
    if (this.stop.aborted) return;
    this.queue.push({ kind: "end", key: runKey(this.settings.prefix, runId), retainMs: bus.retainMs });
    this.schedule();
  }

  /** The events dropped since the last call, and the count put back to zero. */
  takeDropped(): number {
    const dropped = this.dropped;
    this.dropped = 0;
    return dropped;
  }

  /** How many events wait to be written. */
  get pending(): number {
    return this.events;
  }

  /** Starts writing again, after the connection came back. */
  kick(): void {
    this.schedule();
  }

  /** Resolves once nothing is queued or being written. */
  drained(): Promise<void> {
    if (!this.flushing && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Drops the oldest queued events while more than the bound wait. */
  private bound(): void {
    let index = 0;
    while (this.events > this.settings.maxBufferedEvents && index < this.queue.length) {
      if ((this.queue[index] as Write).kind === "event") {
        this.queue.splice(index, 1);
        this.events -= 1;
        this.dropped += 1;
      } else {
        index += 1;
      }
    }
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /** Writes the queue batch by batch until it is empty, waiting out any time the server is gone. */
  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.queue.length > 0 && !this.stop.aborted) {
        if (!this.client.isReady) {
          await whenReady(this.client, this.stop);
          continue;
        }
        const batch = this.queue.splice(0, this.settings.batchSize);
        for (const write of batch) if (write.kind === "event") this.events -= 1;
        const failed = await this.write(batch);
        if (failed.length > 0) {
          this.queue.unshift(...failed);
          for (const write of failed) if (write.kind === "event") this.events += 1;
          this.bound();
          // Lost with the connection still up (a command that timed out): wait a little first.
          if (this.client.isReady) await pause(50, this.stop);
          await whenReady(this.client, this.stop);
        }
      }
    } finally {
      this.flushing = false;
      if (this.queue.length === 0 || this.stop.aborted) {
        const idle = this.idle;
        this.idle = [];
        for (const resolve of idle) resolve();
      } else {
        this.schedule();
      }
    }
  }

  /** The commands for one batch: one script call per run's events, and the commands of each end. */
  private commandsOf(batch: readonly Write[]): Sending[] {
    const sending: Sending[] = [];
    const runs = new Map<string, Write[]>();
    const appendOf = (writes: Write[]): Sending => {
      const last = writes[writes.length - 1] as Extract<Write, { kind: "event" }>;
      const done = writes.some((write) => write.kind === "event" && write.done);
      const ttl = ttlOf(done ? last.retainMs : last.retainUnendedMs);
      const pairs = writes.flatMap((write) => (write.kind === "event" ? [write.id, write.json] : []));
      return { command: ["EVAL", APPEND_SCRIPT, "1", last.key, last.maxLen, ttl, ...pairs], writes };
    };
    for (const write of batch) {
      if (write.kind === "event") {
        const run = runs.get(write.key);
        if (run === undefined) runs.set(write.key, [write]);
        else run.push(write);
        continue;
      }
      // A run's events go before its end.
      const before = runs.get(write.key);
      if (before !== undefined) {
        sending.push(appendOf(before));
        runs.delete(write.key);
      }
      sending.push({ command: ["XTRIM", write.key, "MAXLEN", "0"], writes: [] });
      sending.push({ command: ["XADD", write.key, "*", "end", "1"], writes: [write] });
      sending.push({ command: expiry(write.key, write.retainMs), writes: [] });
    }
    for (const writes of runs.values()) sending.push(appendOf(writes));
    return sending;
  }

  /** Sends one batch; returns the writes that must be sent again, in their order. */
  private async write(batch: readonly Write[]): Promise<Write[]> {
    const sending = this.commandsOf(batch);
    const results = await Promise.allSettled(sending.map((item) => send(this.client, item.command)));
    const lost = new Set<Write>();
    results.forEach((result, index) => {
      if (result.status === "fulfilled") return;
      const item = sending[index] as Sending;
      const reason: unknown = result.reason;
      if (reason instanceof ErrorReply) {
        if (!ALREADY_THERE.test(reason.message)) this.refused(item.command[item.command[0] === "EVAL" ? 3 : 1] as string, reason.message);
      } else {
        for (const write of item.writes) lost.add(write);
      }
    });
    return batch.filter((write) => lost.has(write));
  }

  /** Tells, once per wording, that the server refused a write (a key of another type under the prefix). */
  private refused(key: string, message: string): void {
    if (this.told.has(message)) return;
    this.told.add(message);
    this.notice(`Redis refused to store run events under ${key} (${message}); those events are kept only on this replica.`);
  }
}
