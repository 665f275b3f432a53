/**
 * @module wire/capabilities-learn
 * Reading an endpoint's model listing once, before the first request that carries a schema, so a
 * server that holds answers to a grammar gets the relaxed schemas from that first request on.
 *
 * One read per endpoint record (so per runtime), shared by requests that start together; a read that
 * fails leaves the record as it was, and one that was stopped or met a server still loading its
 * model lets a later request ask again.
 */

import type { Endpoint } from "../shapes/config.js";
import { capabilitiesForIn, type EndpointCapabilities } from "./capabilities.js";
import { listModelsIn } from "./client.js";
import { isModelLoading } from "../text/retry.js";
import type { RuntimeState } from "../state/state.js";

/** Where an endpoint record keeps its listing read, in flight or done: not enumerable, so no snapshot or copy carries it. */
const LISTING_READ: unique symbol = Symbol("listing read");

type Read = EndpointCapabilities & { [LISTING_READ]?: Promise<void> | undefined };

/** Options of {@link learnServerIn}. */
export interface LearnServerOptions {
  /** Stops the read; the request after it sees the signal itself. */
  signal?: AbortSignal | undefined;
}

/**
 * Reads the endpoint's listing where its record has not been read yet, marking it
 * `grammarConstrained` (and `strictSchemas` false) when the listing names such a server. Never
 * rejects: a listing that cannot be had leaves the record as it was.
 *
 * Nothing is read for a record already grammar-constrained or already sending relaxed schemas,
 * since the listing could change nothing there. The read is listModels', bounded at ten seconds
 * or the endpoint's request timeout where shorter.
 *
 * @internal
 */
export async function learnServerIn(state: RuntimeState, endpoint: Endpoint, options: LearnServerOptions = {}): Promise<void> {
  if (typeof endpoint?.baseUrl !== "string" || endpoint.baseUrl.trim() === "") return;
  const supports = capabilitiesForIn(state, endpoint.baseUrl, endpoint.apiKey);
  if (supports.grammarConstrained || !supports.strictSchemas) return;
  const record = supports as Read;
  let read = record[LISTING_READ];
  if (read === undefined) {
    const { signal } = options;
    // listModels marks the record from what the listing says.
    read = listModelsIn(state, endpoint, signal ? { signal } : {}).then(
      () => undefined,
      (error: unknown) => {
        // A stopped read, or a server still loading its model, says nothing about the server: a later request asks again.
        if (signal?.aborted || isModelLoading(error)) record[LISTING_READ] = undefined;
      },
    );
    Object.defineProperty(record, LISTING_READ, { value: read, writable: true, enumerable: false, configurable: true });
  }
  await read;
}
