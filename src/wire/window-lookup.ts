/**
 * @module wire/window-lookup
 * The lookups behind `listModels`, `servedWindow` and `contextLimitFor`: one bounded, abortable
 * run of GETs against a server's listing and its own routes, the reading of a window out of each
 * answer, and the runtime's cache of windows found and routes a server lacks.
 *
 * The client and the endpoint's settings come in through a {@link LookupRoute}, so this file
 * needs nothing from the client module at run time.
 */

import type OpenAI from "openai";
import { defineSlot } from "../state/state.js";
import { isPlainRecord } from "../text/guards.js";
import { isModelLoading } from "../text/retry.js";
import { normaliseBaseUrl } from "./base-url.js";

/** How long a window lookup may take at most, across the listing and the native routes. */
const LOOKUP_BOUND_MS = 10_000;

/** The window keys a listing entry may carry at its top level, in the order they are read. */
const LISTING_WINDOW_KEYS = ["context_length", "max_context_window", "max_model_len", "context_window", "n_ctx"] as const;

/** Statuses that say a route does not exist on this server at all. */
const ROUTE_MISSING: ReadonlySet<number> = new Set([404, 405, 501]);

/** Statuses that say a route is there but not open to this key: asked elsewhere, and again next time. */
const NOT_OPEN: ReadonlySet<number> = new Set([401, 403]);

/** What a runtime has learned about windows: the windows found, and routes a server lacks. */
export interface WindowCache {
  /** Served windows found, by endpoint and model. */
  windows: Map<string, number>;
  /** Origins whose `/props` does not exist. */
  propsMissing: Set<string>;
  /** Origins whose `/api/v0/models` is not asked until this time (Infinity: never again). */
  lmstudioMissUntil: Map<string, number>;
  /** Origins whose Ollama `/api/ps` does not exist. */
  ollamaMissing?: Set<string> | undefined;
  /** The windows Ollama's `/api/ps` said a model is loaded with, by endpoint and model, each good until its time. */
  loaded?: Map<string, LoadedWindow> | undefined;
  /** The windows an endpoint's own overflow refusals named, by endpoint and model. */
  revealed?: Map<string, number> | undefined;
}

/** What Ollama's `/api/ps` said of one model, and until when it is taken as still true. */
export interface LoadedWindow {
  /** The window the model is loaded with, in tokens; absent where the list did not have it. */
  window?: number | undefined;
  /** When to ask again, in epoch milliseconds. */
  until: number;
}

/** The runtime's window cache. */
export const WINDOWS = defineSlot<WindowCache>("client.windows", () => ({
  windows: new Map(),
  propsMissing: new Set(),
  lmstudioMissUntil: new Map(),
}));

/** Where a lookup goes: asked for only once the lookup starts, so a bad endpoint throws then. */
export interface LookupRoute {
  /** The pooled client for the endpoint. */
  client: OpenAI;
  /** The endpoint's request timeout in milliseconds, where it has one. */
  requestMs: number | undefined;
  /** The server's own API root: the base URL less a trailing `/v1`. */
  origin: string;
}

/** Reads a window size: a positive number (or digits in a string), rounded down; undefined otherwise. */
export function windowNumber(value: unknown): number | undefined {
  if (typeof value === "string" && /^\d+$/.test(value.trim())) return windowNumber(Number(value));
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === "number" ? status : undefined;
}

/** A TimeoutError as fetch and AbortSignal.timeout raise it. */
function timeoutError(ms: number): DOMException {
  return new DOMException(`The window lookup took longer than ${ms} ms.`, "TimeoutError");
}

/** Why a lookup stopped before its answer: the caller's signal, or the bound. */
class LookupStopped {
  constructor(
    readonly error: unknown,
    readonly byCaller: boolean,
  ) {}
}

/** One bounded lookup: the client, a signal that ends at the bound or the caller's abort. */
export class Lookup {
  readonly client: OpenAI;
  /** The server's own API root, where `/props` and `/api/v0/models` sit. */
  readonly origin: string;
  readonly #controller = new AbortController();
  readonly #timer: ReturnType<typeof setTimeout>;
  readonly #signal: AbortSignal | undefined;
  readonly boundMs: number;
  #stopped: LookupStopped | undefined;
  readonly #onAbort = (): void => this.#stop(new LookupStopped(this.#signal?.reason, true));

  constructor(route: LookupRoute, signal: AbortSignal | undefined) {
    this.client = route.client;
    this.origin = route.origin;
    const request = route.requestMs;
    this.boundMs = request !== undefined && request < LOOKUP_BOUND_MS ? request : LOOKUP_BOUND_MS;
    this.#signal = signal;
    this.#timer = setTimeout(() => this.#stop(new LookupStopped(timeoutError(this.boundMs), false)), this.boundMs);
    signal?.addEventListener("abort", this.#onAbort, { once: true });
  }

  #stop(stopped: LookupStopped): void {
    if (this.#stopped !== undefined) return;
    this.#stopped = stopped;
    this.#controller.abort(stopped.error);
  }

  /** Throws the reason the lookup stopped, if it has. */
  check(): void {
    if (this.#stopped !== undefined) throw this.#stopped;
  }

  /** GETs a path (relative to the base URL) or an absolute URL; a stop wins over the error it caused. */
  async get(path: string): Promise<unknown> {
    this.check();
    try {
      const body: unknown = await this.client.get(path, {
        signal: this.#controller.signal,
        maxRetries: 0,
        timeout: this.boundMs + 1_000,
      });
      this.check();
      return body;
    } catch (error) {
      this.check();
      throw error;
    }
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#signal?.removeEventListener("abort", this.#onAbort);
  }
}

/** Runs a lookup, turning a stop into the caller's reason or a TimeoutError. */
export async function bounded<T>(route: () => LookupRoute, signal: AbortSignal | undefined, work: (lookup: Lookup) => Promise<T>): Promise<T> {
  if (signal?.aborted) throw signal.reason;
  const lookup = new Lookup(route(), signal);
  try {
    return await work(lookup);
  } catch (error) {
    if (error instanceof LookupStopped) throw error.error;
    throw error;
  } finally {
    lookup.close();
  }
}

/** Reads the server's `/models` listing: the entries that have a string id. */
export async function readListing(lookup: Lookup): Promise<ListedModel[]> {
  const body = await lookup.get("/models");
  const data = isPlainRecord(body) ? body.data : Array.isArray(body) ? body : undefined;
  if (!Array.isArray(data)) return [];
  return data.filter((entry): entry is ListedModel => isPlainRecord(entry) && typeof entry.id === "string");
}

/** Route misses one lookup found, kept apart until the lookup finishes so a stopped one leaves nothing. */
interface Learned {
  propsMissing?: boolean | undefined;
  ollamaMissing?: boolean | undefined;
  lmstudioMissUntil?: number | undefined;
  lmstudioFound?: boolean | undefined;
}

function commit(cache: WindowCache, origin: string, learned: Learned): void {
  if (learned.propsMissing) cache.propsMissing.add(origin);
  if (learned.ollamaMissing) (cache.ollamaMissing ??= new Set()).add(origin);
  if (learned.lmstudioFound) cache.lmstudioMissUntil.delete(origin);
  if (learned.lmstudioMissUntil !== undefined) cache.lmstudioMissUntil.set(origin, learned.lmstudioMissUntil);
}

/**
 * The entry of Ollama's `/api/ps` list for a model: matched on `name` or `model`, a bare name
 * standing for its `:latest` tag; undefined where the model is not loaded.
 */
export function loadedEntry(models: readonly unknown[], model: string): Record<string, unknown> | undefined {
  const names = model.includes(":") ? [model] : [model, `${model}:latest`];
  const entry = models.find((item) => isPlainRecord(item) && (names.includes(String(item.name)) || names.includes(String(item.model))));
  return isPlainRecord(entry) ? entry : undefined;
}

/** The key a window is kept under: the endpoint's normalised base URL, its key and the model. */
export function windowKeyOf(baseUrl: string, apiKey: string | undefined, model: string): string {
  return `${normaliseBaseUrl(baseUrl)}\u0000${apiKey || ""}\u0000${model}`;
}

/**
 * llama.cpp's `/props`, then LM Studio's `/api/v0/models`, then, where the server has neither,
 * Ollama's `/api/ps`; undefined where none says.
 *
 * Both are asked with the endpoint's key. A route that answers 401 or 403 is not open to that
 * key and one that says the model is loading has nothing to say yet: neither is remembered as a
 * miss, and a loading server is not asked further.
 */
export async function readServedWindow(lookup: Lookup, cache: WindowCache, model: string, options: WindowLookupOptions): Promise<number | undefined> {
  const origin = lookup.origin;
  const learned: Learned = {};
  let found: number | undefined;
  if (!cache.propsMissing.has(origin)) {
    try {
      const body = await lookup.get(`${origin}/props?model=${encodeURIComponent(model)}`);
      const settings = isPlainRecord(body) ? body.default_generation_settings : undefined;
      found = windowNumber(isPlainRecord(settings) ? settings.n_ctx : undefined) ?? windowNumber(isPlainRecord(body) ? body.n_ctx : undefined);
      // LM Studio answers a route it does not have with a 200 carrying only an error.
      if (found === undefined && isPlainRecord(body) && body.error !== undefined && settings === undefined) learned.propsMissing = true;
    } catch (error) {
      if (error instanceof LookupStopped) throw error;
      // A server still loading answers every route so: nothing is known yet, and nothing is learned.
      if (isModelLoading(error)) return undefined;
      const status = statusOf(error);
      if (status !== undefined && ROUTE_MISSING.has(status)) learned.propsMissing = true;
    }
  }
  const now = options.now ?? Date.now;
  const until = cache.lmstudioMissUntil.get(origin);
  if (found === undefined && (until === undefined || now() >= until)) {
    try {
      const body = await lookup.get(`${origin}/api/v0/models`);
      const data = isPlainRecord(body) ? body.data : undefined;
      if (Array.isArray(data)) {
        learned.lmstudioFound = true;
        const entry = data.find((item) => isPlainRecord(item) && item.id === model);
        found = windowNumber(isPlainRecord(entry) ? entry.loaded_context_length : undefined);
      } else if (isPlainRecord(body) && body.error !== undefined) learned.lmstudioMissUntil = Number.POSITIVE_INFINITY;
    } catch (error) {
      if (error instanceof LookupStopped) throw error;
      const status = statusOf(error);
      if (!isModelLoading(error) && !(status !== undefined && NOT_OPEN.has(status))) {
        learned.lmstudioMissUntil = status !== undefined && ROUTE_MISSING.has(status) ? Number.POSITIVE_INFINITY : now() + (options.listingMissMs ?? 60_000);
      }
    }
  }
  // Ollama has neither route: its loaded window is /api/ps's context_length (the num_ctx the model
  // was loaded with), often far below the trained one /api/show reports. A model not in the list is
  // not loaded yet, so unknown for now.
  const neither =
    (learned.propsMissing || cache.propsMissing.has(origin)) && (learned.lmstudioMissUntil ?? cache.lmstudioMissUntil.get(origin)) === Number.POSITIVE_INFINITY;
  if (found === undefined && neither && !cache.ollamaMissing?.has(origin)) {
    try {
      const body = await lookup.get(`${origin}/api/ps`);
      const loaded = isPlainRecord(body) && Array.isArray(body.models) ? body.models : undefined;
      if (loaded === undefined) learned.ollamaMissing = true;
      else found = windowNumber(loadedEntry(loaded, model)?.context_length);
    } catch (error) {
      if (error instanceof LookupStopped) throw error;
      const status = statusOf(error);
      if (status !== undefined && ROUTE_MISSING.has(status)) learned.ollamaMissing = true;
    }
  }
  lookup.check();
  commit(cache, origin, learned);
  return found;
}

/**
 * Reads a model's window from the listing (a top-level window, then llama.cpp's `meta.n_ctx`),
 * then the server's own routes, then the trained window; keeps a window found under `key`, and
 * answers zero where nothing says or the server is still loading the model.
 */
export async function readContextLimit(lookup: Lookup, cache: WindowCache, key: string, model: string, options: WindowLookupOptions): Promise<number> {
  let trained: number | undefined;
  try {
    const entry = (await readListing(lookup)).find((listed) => listed.id === model);
    if (entry !== undefined) {
      for (const name of LISTING_WINDOW_KEYS) {
        const listed = windowNumber(entry[name]);
        if (listed !== undefined) {
          cache.windows.set(key, listed);
          return listed;
        }
      }
      // llama.cpp lists the model with meta: null while it loads: unknown for now.
      if (entry.meta === null) return 0;
      const meta = isPlainRecord(entry.meta) ? entry.meta : undefined;
      // llama.cpp's meta.n_ctx is the window each slot serves (-c over -np), n_ctx_train the trained one.
      const served = windowNumber(meta?.n_ctx);
      if (served !== undefined) {
        cache.windows.set(key, served);
        return served;
      }
      trained = windowNumber(meta?.n_ctx_train);
    }
  } catch (error) {
    if (error instanceof LookupStopped) throw error;
    // A server that cannot be reached has no window to give, nor one still loading the model;
    // one that refused the listing may still answer on its own routes.
    if (statusOf(error) === undefined || isModelLoading(error)) return 0;
  }
  const served = await readServedWindow(lookup, cache, model, options);
  if (served !== undefined) {
    cache.windows.set(key, served);
    return served;
  }
  return trained ?? 0;
}

/** One entry of a `/v1/models` listing: an id and whatever the server adds. */
export type ListedModel = { id: string } & Record<string, unknown>;

/** Options of {@link listModels}, {@link servedWindow} and {@link contextLimitFor}. */
export interface WindowLookupOptions {
  /** Stops the lookup: it rejects with the signal's reason and remembers nothing of it. */
  signal?: AbortSignal | undefined;
  /**
   * How long LM Studio's `/api/v0/models` is left alone after it failed with anything other than
   * 404, 405 or 501 (which drop it for the life of the process), in milliseconds.
   * @default 60000
   */
  listingMissMs?: number | undefined;
  /**
   * The clock `listingMissMs` is measured on, in milliseconds.
   * @default Date.now
   */
  now?: (() => number) | undefined;
}
