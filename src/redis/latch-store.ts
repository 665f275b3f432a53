/**
 * @module redis/latch-store
 * The shared latches in Redis: one set of facts (each a capabilities-snapshot endpoint entry
 * holding one latch, API keys only as their hash) and one channel that tells the other replicas
 * of each fact as it is added.
 *
 * The backend keeps every fact it has seen in memory, which is what `loadLatches` answers with.
 * Whatever could not be written while the server was gone is written when it is back, and then
 * the whole set is written again and read back: a server that restarted empty gets the facts
 * back, and this replica learns the facts published while it could not hear them.
 */

import { CAPABILITIES_SNAPSHOT_VERSION, type SharedLatches } from "../index.js";
import { send, type RedisConnection } from "./connection.js";
import type { RedisSettings } from "./options.js";

/** What one broadcast carries: who sent it and the facts. */
interface Broadcast {
  from: string;
  endpoints: object[];
}

/** The shared latch set and its channel. */
export class LatchStore {
  /** Every fact seen, by its JSON text. */
  private readonly facts = new Map<string, object>();
  /** Facts not yet written to the server. */
  private readonly unwritten = new Set<string>();
  private readonly listeners = new Set<(latches: SharedLatches) => void>();
  private inflight: Promise<void> | undefined;
  /** The set's key and the channel's name, one per snapshot version. */
  readonly key: string;
  readonly channel: string;

  constructor(
    private readonly client: RedisConnection,
    private readonly subscriber: RedisConnection,
    settings: RedisSettings,
    private readonly instance: string,
  ) {
    this.key = `${settings.prefix}latches:v${CAPABILITIES_SNAPSHOT_VERSION}`;
    this.channel = this.key;
  }

  /** Listens on the channel, then reads the whole set: nothing published meanwhile is missed. */
  async start(): Promise<void> {
    await this.subscriber.subscribe(this.channel, (message) => this.heard(message));
    this.learn(await send(this.client, ["SMEMBERS", this.key]));
  }

  /** Every fact seen, as a snapshot. */
  load(): SharedLatches {
    return { version: CAPABILITIES_SNAPSHOT_VERSION, endpoints: [...this.facts.values()] };
  }

  /** Adds a listener for facts other replicas publish. */
  listen(listener: (latches: SharedLatches) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Stores facts this replica learned and tells the others, and the other runtimes on this
   * backend (the one that published them finds nothing new in them).
   */
  publish(latches: SharedLatches): void {
    if (latches?.version !== CAPABILITIES_SNAPSHOT_VERSION || !Array.isArray(latches.endpoints)) return;
    const fresh: object[] = [];
    for (const entry of latches.endpoints) {
      let text: string;
      try {
        text = JSON.stringify(entry);
      } catch {
        continue;
      }
      if (typeof text !== "string" || this.facts.has(text)) continue;
      this.facts.set(text, entry);
      this.unwritten.add(text);
      fresh.push(entry);
    }
    if (fresh.length > 0) queueMicrotask(() => this.tell(fresh));
    void this.write();
  }

  /** Writes every fact again and reads the set back, after the server was lost. */
  async resync(): Promise<void> {
    await this.write();
    try {
      if (this.facts.size > 0) await send(this.client, ["SADD", this.key, ...this.facts.keys()]);
      this.learn(await send(this.client, ["SMEMBERS", this.key]), true);
    } catch {
      // Lost again: the next reconnect tries again.
    }
  }

  /** Resolves once nothing waits to be written, or the server is gone. */
  async flush(): Promise<void> {
    for (let round = 0; round < 8 && (this.inflight !== undefined || (this.unwritten.size > 0 && this.client.isReady)); round += 1) await this.write();
  }

  /** Writes the unwritten facts and broadcasts them, one write at a time. */
  private async write(): Promise<void> {
    if (this.inflight !== undefined) return this.inflight;
    if (this.unwritten.size === 0 || !this.client.isReady) return;
    let written = false;
    this.inflight = this.writeOnce()
      .then((ok) => {
        written = ok;
      })
      .finally(() => {
        this.inflight = undefined;
      });
    await this.inflight;
    // Facts published while this write was out go next; a refused write waits for the next publish or reconnect.
    if (written && this.unwritten.size > 0 && this.client.isReady) await this.write();
  }

  /** One SADD and one PUBLISH of what is unwritten; false where it failed and was put back. */
  private async writeOnce(): Promise<boolean> {
    const texts = [...this.unwritten];
    this.unwritten.clear();
    const message: Broadcast = { from: this.instance, endpoints: texts.map((text) => this.facts.get(text) as object) };
    try {
      // Sent together, in this order, in one round trip: the set holds a fact before anyone hears of it.
      await Promise.all([send(this.client, ["SADD", this.key, ...texts]), send(this.client, ["PUBLISH", this.channel, JSON.stringify(message)])]);
      return true;
    } catch {
      for (const text of texts) this.unwritten.add(text);
      return false;
    }
  }

  /** Takes facts read from the set; tells the listeners of the new ones where asked. */
  private learn(members: unknown, tell = false): void {
    if (!Array.isArray(members)) return;
    const fresh: object[] = [];
    for (const text of members) {
      if (typeof text !== "string" || this.facts.has(text)) continue;
      try {
        const entry = JSON.parse(text) as unknown;
        if (entry === null || typeof entry !== "object" || Array.isArray(entry)) continue;
        this.facts.set(text, entry);
        fresh.push(entry);
      } catch {
        // Not a fact this version writes.
      }
    }
    if (tell && fresh.length > 0) this.tell(fresh);
  }

  /** A broadcast arrived: the facts another replica added. */
  private heard(message: string): void {
    let broadcast: Broadcast;
    try {
      broadcast = JSON.parse(message) as Broadcast;
    } catch {
      return;
    }
    if (broadcast?.from === this.instance || !Array.isArray(broadcast?.endpoints)) return;
    const fresh: object[] = [];
    for (const entry of broadcast.endpoints) {
      if (entry === null || typeof entry !== "object") continue;
      const text = JSON.stringify(entry);
      if (this.facts.has(text)) continue;
      this.facts.set(text, entry);
      fresh.push(entry);
    }
    if (fresh.length > 0) this.tell(fresh);
  }

  private tell(endpoints: object[]): void {
    const latches: SharedLatches = { version: CAPABILITIES_SNAPSHOT_VERSION, endpoints };
    for (const listener of this.listeners) {
      try {
        listener(latches);
      } catch {
        // One runtime's failure to apply latches is not another's.
      }
    }
  }
}
