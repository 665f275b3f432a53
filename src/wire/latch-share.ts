/**
 * @module wire/latch-share
 * The latches of a runtime on a backend, cut into single facts the replicas exchange: what this
 * replica learned goes out once, what the others learned comes in through the snapshot's import.
 *
 * A fact is one endpoint entry of the capabilities snapshot holding exactly one latch (a flag
 * off, one refused effort, one dropped field), written with the same key hashing as a snapshot.
 * Latches only ever move away from a fresh record, so the shared set of facts needs no order and
 * no merge: the union of every replica's facts is the shared snapshot, and adding a fact twice
 * changes nothing.
 */

import { endpointEntriesIn, type EndpointEntry } from "./capabilities.js";
import { CAPABILITIES_SNAPSHOT_VERSION, exportCapabilitiesIn, importCapabilitiesIn, type EndpointSnapshot } from "./snapshot.js";
import { createState, type RuntimeState } from "../state/state.js";
import type { SharedLatches } from "../state/backend.js";
import { isPlainRecord } from "../text/guards.js";

/**
 * Cuts one endpoint entry of a snapshot into entries of one latch each, as canonical JSON text
 * (the same latch always gives the same text).
 * @internal
 */
export function latchFacts(entry: unknown): string[] {
  if (!isPlainRecord(entry) || typeof entry.baseUrl !== "string") return [];
  const head = { baseUrl: entry.baseUrl, key: typeof entry.key === "string" ? entry.key : "" };
  const facts: string[] = [];
  for (const [field, value] of Object.entries(entry)) {
    if (field === "baseUrl" || field === "key") continue;
    if (field !== "models") {
      facts.push(JSON.stringify({ ...head, [field]: value }));
      continue;
    }
    if (!isPlainRecord(value)) continue;
    for (const [model, record] of Object.entries(value)) {
      if (!isPlainRecord(record)) continue;
      for (const [latch, latched] of Object.entries(record)) {
        const parts = Array.isArray(latched) ? latched.map((item: unknown) => [item]) : [latched];
        for (const part of parts) facts.push(JSON.stringify({ ...head, models: { [model]: { [latch]: part } } }));
      }
    }
  }
  return facts;
}

/** One endpoint's latches as a snapshot entry, written by the snapshot's own export. */
function exportEntry(entry: EndpointEntry): EndpointSnapshot | undefined {
  const view = createState();
  endpointEntriesIn(view).set("", entry);
  return exportCapabilitiesIn(view).endpoints[0];
}

/**
 * Publishes the facts of one endpoint's record that `known` does not hold yet, and adds them to
 * it; never throws.
 * @internal
 */
export function shareEntryIn(state: RuntimeState, known: Set<string>, entry: EndpointEntry): void {
  const link = state.link;
  if (link === undefined) return;
  try {
    const exported = exportEntry(entry);
    if (exported === undefined) return;
    const fresh = latchFacts(exported).filter((fact) => !known.has(fact));
    if (fresh.length === 0) return;
    for (const fact of fresh) known.add(fact);
    link.backend.publishLatches({ version: CAPABILITIES_SNAPSHOT_VERSION, endpoints: fresh.map((fact) => JSON.parse(fact) as object) });
  } catch {
    // Sharing is best effort; the latch stays learned here either way.
  }
}

/** A record with no prototype, so that no name read off the wire ("__proto__") can reach one. */
const bare = (): Record<string, unknown> => Object.create(null) as Record<string, unknown>;

/** Joins entries of one endpoint into one, so a set of many single facts imports as few entries. */
function joinEntries(entries: readonly unknown[]): unknown[] {
  const joined = new Map<string, Record<string, unknown>>();
  const others: unknown[] = [];
  for (const entry of entries) {
    if (!isPlainRecord(entry) || typeof entry.baseUrl !== "string") {
      others.push(entry);
      continue;
    }
    const id = JSON.stringify([entry.baseUrl, entry.key ?? ""]);
    let into = joined.get(id);
    if (into === undefined) {
      into = Object.assign(bare(), { baseUrl: entry.baseUrl, key: entry.key ?? "" });
      joined.set(id, into);
    }
    for (const [field, value] of Object.entries(entry)) {
      if (field === "baseUrl" || field === "key") continue;
      if (field !== "models" || !isPlainRecord(value)) {
        into[field] = value;
        continue;
      }
      const models = isPlainRecord(into.models) ? into.models : bare();
      into.models = models;
      for (const [model, record] of Object.entries(value)) {
        if (!isPlainRecord(record)) continue;
        const target = isPlainRecord(models[model]) ? (models[model] as Record<string, unknown>) : bare();
        models[model] = target;
        for (const [latch, latched] of Object.entries(record)) {
          const before = target[latch];
          target[latch] = Array.isArray(before) && Array.isArray(latched) ? [...new Set([...before, ...latched])] : latched;
        }
      }
    }
  }
  return [...joined.values(), ...others];
}

/**
 * Applies latches another replica shared (or the backend's whole set) to this state, and notes
 * their facts as known so they are not published back; never throws.
 * @internal
 */
export function receiveLatchesIn(state: RuntimeState, known: Set<string>, latches: SharedLatches | unknown): void {
  try {
    if (!isPlainRecord(latches) || latches.version !== CAPABILITIES_SNAPSHOT_VERSION || !Array.isArray(latches.endpoints)) return;
    importCapabilitiesIn(state, { version: latches.version, endpoints: joinEntries(latches.endpoints) });
    for (const entry of latches.endpoints as unknown[]) for (const fact of latchFacts(entry)) known.add(fact);
  } catch {
    // A blob the import cannot read changes nothing.
  }
}
