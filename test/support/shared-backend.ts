/**
 * A RuntimeBackend kept in this process's memory and shared by the runtimes given its replicas:
 * what the interface promises, without a server, for the core's own tests of the backend hooks.
 *
 * Each `replica()` is one backend object, as one replica of a host would hold; what one replica
 * publishes reaches the listeners of the others. Events are handed to followers on a later
 * microtask, as a real backend hands them later. `lose` makes the store skip some seqs, as a
 * trimmed or interrupted stream does.
 */
import type { EventSettings, RunEvent, RunFollower, RuntimeBackend, SharedLatches } from "../../src/index.js";

/** The calls a replica received, for a test to read. */
export interface ReplicaCalls {
  appended: Array<{ runId: string; events: RunEvent[]; settings: EventSettings }>;
  ended: string[];
  follows: Array<{ runId: string; after: number }>;
  published: SharedLatches[];
}

/** One in-memory hub and its replicas. */
export interface SharedHub {
  /** Every run's stored events. */
  readonly runs: Map<string, RunEvent[]>;
  /** The latch entries every replica published, in order. */
  readonly latches: object[];
  /** Seqs of a run the store will not keep. */
  lose(runId: string, seqs: Iterable<number>): void;
  /** A backend for one replica, and what it was called with. */
  replica(): RuntimeBackend & { calls: ReplicaCalls; followers(): number };
}

/** Makes an empty hub. */
export function sharedHub(): SharedHub {
  const runs = new Map<string, RunEvent[]>();
  const ended = new Set<string>();
  const lost = new Map<string, Set<number>>();
  const latches: object[] = [];
  const follows = new Set<{ runId: string; after: number; follower: RunFollower; active: boolean }>();
  const listeners = new Set<{ owner: object; listener: (latches: SharedLatches) => void }>();
  const later = (work: () => void) => queueMicrotask(work);

  const deliver = (follow: { runId: string; after: number; follower: RunFollower; active: boolean }) => {
    if (!follow.active) return;
    const fresh = (runs.get(follow.runId) ?? []).filter((event) => event.seq > follow.after);
    if (fresh.length > 0) {
      follow.after = fresh.at(-1)!.seq;
      follow.follower.events(fresh.map((event): RunEvent => JSON.parse(JSON.stringify(event))));
    }
    if (ended.has(follow.runId) && follow.active) {
      follow.active = false;
      follow.follower.ended();
    }
  };

  return {
    runs,
    latches,
    lose(runId, seqs) {
      const set = lost.get(runId) ?? new Set<number>();
      for (const seq of seqs) set.add(seq);
      lost.set(runId, set);
    },
    replica() {
      const owner = {};
      const calls: ReplicaCalls = { appended: [], ended: [], follows: [], published: [] };
      return {
        calls,
        followers: () => [...follows].filter((follow) => follow.active).length,
        appendEvents(runId, events, settings) {
          calls.appended.push({ runId, events: [...events], settings: { ...settings } });
          const stored = runs.get(runId) ?? [];
          runs.set(runId, stored);
          for (const event of events) if (!lost.get(runId)?.has(event.seq)) stored.push(event);
          later(() => {
            for (const follow of follows) if (follow.runId === runId) deliver(follow);
          });
        },
        endRun(runId) {
          calls.ended.push(runId);
          ended.add(runId);
          runs.set(runId, []);
          later(() => {
            for (const follow of follows) if (follow.runId === runId) deliver(follow);
          });
        },
        followRun(runId, after, follower) {
          calls.follows.push({ runId, after });
          const follow = { runId, after, follower, active: true };
          follows.add(follow);
          later(() => deliver(follow));
          return () => {
            follow.active = false;
            follows.delete(follow);
          };
        },
        publishLatches(shared) {
          calls.published.push(shared);
          latches.push(...shared.endpoints);
          for (const entry of listeners) if (entry.owner !== owner) entry.listener(shared);
        },
        loadLatches: () => ({ version: 1, endpoints: [...latches] }),
        onLatches(listener) {
          const entry = { owner, listener };
          listeners.add(entry);
          return () => listeners.delete(entry);
        },
      };
    },
  };
}
