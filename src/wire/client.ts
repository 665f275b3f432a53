/**
 * @module client
 * A pooled OpenAI client per endpoint, the timeouts read off an endpoint, the key an endpoint
 * gets, and the context window a model is served with.
 *
 * Every client of one runtime shares one keep-alive connection pool (an undici Agent), so turn
 * after turn to the same server reuses its sockets. The pool, the windows learned and the routes
 * a server turned out not to have live in the runtime state, never in this module.
 */

import OpenAI from "openai";
import { Agent } from "undici";
import type { Endpoint } from "../shapes/config.js";
import { defaultState, defineSlot, slotOf, type RuntimeState } from "../state/state.js";
import { originBoundFetch } from "./origin-fetch.js";
import {
  bounded,
  readContextLimit,
  readListing,
  readServedWindow,
  windowKeyOf,
  windowNumber,
  WINDOWS,
  type ListedModel,
  type LookupRoute,
  type WindowLookupOptions,
} from "./window-lookup.js";
import { MAX_BASE_URL_CHARS, normaliseBaseUrl, trimBaseUrl } from "./base-url.js";
import { quoteGiven } from "../text/guards.js";
import { noteListingIn } from "./capabilities-server.js";

export { MAX_BASE_URL_CHARS, normaliseBaseUrl, trimBaseUrl } from "./base-url.js";
export { quoteGiven } from "../text/guards.js";

export type { ListedModel, WindowLookupOptions };

/**
 * The key sent to an endpoint that has none.
 *
 * The openai SDK will not build a client without a key, and a local server ignores the
 * `Authorization` header it turns into, so this placeholder stands in for "no key". It names
 * itself, so a server log that shows it says plainly that no key was configured.
 */
export const NO_KEY = "no-key";

/** The longest delay a Node timer takes; the SDK's "no timeout" is this. */
const FOREVER_MS = 2_147_483_647;

interface Pool {
  agent: Agent | undefined;
  clients: Map<string, OpenAI>;
}

const POOL = defineSlot<Pool>(
  "client.pool",
  () => ({ agent: undefined, clients: new Map() }),
  (pool) => {
    pool.clients.clear();
    const agent = pool.agent;
    pool.agent = undefined;
    agent?.close().catch(() => undefined);
  },
);

/**
 * Checks that a base URL can be sent to: an `http:` or `https:` URL.
 *
 * @throws TypeError naming `config.baseUrl` and what was given, for anything else.
 */
export function checkBaseUrl(baseUrl: unknown): asserts baseUrl is string {
  const example = "for example http://127.0.0.1:8080/v1";
  // A string past the cap is refused before any scan, so a long one costs nothing to turn down.
  if (typeof baseUrl === "string" && baseUrl.length > MAX_BASE_URL_CHARS) {
    throw new TypeError(`config.baseUrl is ${baseUrl.length} characters long, more than the ${MAX_BASE_URL_CHARS} a base URL may be.`);
  }
  if (typeof baseUrl !== "string" || baseUrl.trim() === "")
    throw new TypeError(`config.baseUrl must be the endpoint's URL, ${example}; given ${quoteGiven(baseUrl)}.`);
  let protocol = "";
  try {
    protocol = new URL(baseUrl.trim()).protocol;
  } catch {
    throw new TypeError(`config.baseUrl is not a URL, ${example}; given ${quoteGiven(baseUrl)}.`);
  }
  if (protocol !== "http:" && protocol !== "https:")
    throw new TypeError(`config.baseUrl must be an http:// or https:// URL, ${example}; given ${quoteGiven(baseUrl)}.`);
}

/**
 * Reads the timeout for a call that does not stream off an endpoint, in milliseconds.
 *
 * `requestTimeoutSeconds` of zero, a negative or non-finite number, or none at all answers
 * undefined, which waits for ever — what a local model answering slowly needs.
 */
export function timeoutMs(config: { requestTimeoutSeconds?: number | undefined }): number | undefined {
  const seconds = config.requestTimeoutSeconds;
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds <= 0) return undefined;
  return Math.min(Math.round(seconds * 1000), FOREVER_MS);
}

/**
 * Reads how long the first streamed chunk may take off an endpoint, in milliseconds.
 *
 * It is `firstTokenSeconds` where that is set above zero, otherwise five times
 * `requestTimeoutSeconds`, otherwise undefined (wait for ever). The first chunk waits for
 * prefill, which on a long prompt takes far longer than any gap between two later chunks.
 */
export function firstTokenMs(config: { requestTimeoutSeconds?: number | undefined; firstTokenSeconds?: number | undefined }): number | undefined {
  const first = config.firstTokenSeconds;
  if (typeof first === "number" && Number.isFinite(first) && first > 0) return Math.min(Math.round(first * 1000), FOREVER_MS);
  const request = timeoutMs(config);
  return request === undefined ? undefined : Math.min(request * 5, FOREVER_MS);
}

/**
 * Decides which key an endpoint gets, given the settings it inherits from.
 *
 * The endpoint's own key wins. An endpoint that names a base URL of its own, different from the
 * inherited one, gets {@link NO_KEY}: the operator's key (and `$OPENAI_API_KEY`) is never sent
 * to a server nobody chose it for. Anything else inherits: the inherited key, else
 * `env.OPENAI_API_KEY`, else {@link NO_KEY}. Base URLs are compared after
 * {@link normaliseBaseUrl}, so a trailing slash or an upper-case host is the same server. An
 * empty key counts as none.
 *
 * @param endpoint - The endpoint asking, with its own base URL and key where it has them.
 * @param inherited - The settings it inherits from.
 * @param env - Where `OPENAI_API_KEY` is read. @default process.env
 */
export function resolveApiKey(
  endpoint: { baseUrl?: string; apiKey?: string },
  inherited: { baseUrl: string; apiKey?: string },
  env: Record<string, string | undefined> = process.env,
): string {
  if (endpoint.apiKey) return endpoint.apiKey;
  const own = endpoint.baseUrl?.trim();
  if (own && normaliseBaseUrl(own) !== normaliseBaseUrl(inherited.baseUrl)) return NO_KEY;
  if (inherited.apiKey) return inherited.apiKey;
  const fromEnv = env.OPENAI_API_KEY;
  return fromEnv ? fromEnv : NO_KEY;
}

function headersKey(headers: Record<string, string> | undefined): string {
  if (!headers) return "";
  const entries = Object.entries(headers)
    .map(([name, value]) => [name.toLowerCase(), value] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length === 0 ? "" : JSON.stringify(entries);
}

/** The pool key: what makes two endpoints the same client. */
function poolKey(endpoint: Endpoint): string {
  return [normaliseBaseUrl(endpoint.baseUrl), endpoint.apiKey || "", timeoutMs(endpoint) ?? 0, headersKey(endpoint.headers)].join("\u0000");
}

/**
 * Returns the pooled client for an endpoint from `state`.
 *
 * @internal
 */
export function getClientIn(state: RuntimeState, endpoint: Endpoint): OpenAI {
  checkBaseUrl(endpoint?.baseUrl);
  refuseUserinfo(endpoint.baseUrl);
  const pool = slotOf(state, POOL);
  const key = poolKey(endpoint);
  const found = pool.clients.get(key);
  if (found) return found;
  // No undici timers: a stream is watched by streamTurn's own watchdog, and a call that does not
  // stream is bounded by the SDK's timeout below.
  pool.agent ??= new Agent({ headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 30_000 });
  const client = new OpenAI({
    baseURL: trimBaseUrl(endpoint.baseUrl),
    apiKey: endpoint.apiKey || NO_KEY,
    maxRetries: 0,
    timeout: timeoutMs(endpoint) ?? FOREVER_MS,
    // Credentials stay on their origin: a cross-origin redirect drops the key and these headers.
    fetch: originBoundFetch(Object.keys(endpoint.headers ?? {})) as unknown as typeof fetch,
    fetchOptions: { dispatcher: pool.agent } as NonNullable<ConstructorParameters<typeof OpenAI>[0]>["fetchOptions"],
    ...(endpoint.headers ? { defaultHeaders: endpoint.headers } : {}),
  });
  // util.inspect (and so console.log) shows where the client goes, never its key or headers.
  const shown = `OpenAI client for ${normaliseBaseUrl(endpoint.baseUrl)}`;
  Object.defineProperty(client, INSPECT, { value: () => shown, enumerable: false });
  pool.clients.set(key, client);
  return client;
}

/** The symbol util.inspect looks for on an object that says how it is shown. */
const INSPECT = Symbol.for("nodejs.util.inspect.custom");

/**
 * Refuses a base URL that carries a user name or password: fetch will not send one, and the pool
 * could not tell two of them apart. The error names the host, never the password.
 */
function refuseUserinfo(baseUrl: string): void {
  let url: URL;
  try {
    url = new URL(trimBaseUrl(baseUrl));
  } catch {
    return;
  }
  if (url.username === "" && url.password === "") return;
  throw new TypeError(`baseUrl ${url.protocol}//***@${url.host} carries a user name or password; give the key as apiKey, or in headers.`);
}

/**
 * Returns the OpenAI client for an endpoint, one per endpoint for the life of the process.
 *
 * Endpoints with the same base URL (compared after {@link normaliseBaseUrl}), key (absent and
 * empty are the same: {@link NO_KEY} is sent), request timeout and headers share one client, and
 * every client shares one keep-alive connection pool. The SDK's own retries are off (re-sending
 * is `negotiate`'s and `runTurn`'s decision), and `requestTimeoutSeconds` bounds calls that do
 * not stream; zero or absent waits for ever. `resetAll` closes the pool.
 *
 * @example
 * ```ts
 * const client = getClient({ baseUrl: "http://127.0.0.1:8080/v1" });
 * const models = await client.models.list();
 * ```
 */
export function getClient(endpoint: Endpoint): OpenAI {
  return getClientIn(defaultState, endpoint);
}

/** The server's own API sits at its origin: the base URL less a trailing `/v1`. @internal */
export function nativeBase(baseUrl: string): string {
  return normaliseBaseUrl(baseUrl).replace(/\/v1$/, "");
}

function windowKey(endpoint: Endpoint, model: string): string {
  return windowKeyOf(endpoint.baseUrl, endpoint.apiKey, model);
}

/** Where a lookup for `endpoint` goes, read once the lookup starts (the client first, which checks the endpoint). @internal */
export function routeTo(state: RuntimeState, endpoint: Endpoint): () => LookupRoute {
  return () => ({ client: getClientIn(state, endpoint), requestMs: timeoutMs(endpoint), origin: nativeBase(endpoint.baseUrl) });
}

/**
 * Lists the models an endpoint serves, from `state`.
 *
 * @internal
 */
export async function listModelsIn(state: RuntimeState, endpoint: Endpoint, options: WindowLookupOptions = {}): Promise<ListedModel[]> {
  const listing = await bounded(routeTo(state, endpoint), options.signal, readListing);
  noteListingIn(state, endpoint, listing);
  return listing;
}

/**
 * Lists the models an endpoint serves: the entries of its `/v1/models`, each with whatever
 * fields the server adds (windows, llama.cpp's `meta`).
 *
 * A listing whose owner names a server that holds answers to a grammar built from the schema
 * (llama.cpp, vLLM, LM Studio) marks the endpoint's record `grammarConstrained`, so the requests
 * after it send relaxed schemas.
 *
 * Bounded at ten seconds, or the endpoint's request timeout where that is shorter; past it the
 * promise rejects with a `TimeoutError`. An aborted `signal` rejects with its reason; a refusal
 * rejects with the SDK's error.
 */
export function listModels(endpoint: Endpoint, options: WindowLookupOptions = {}): Promise<ListedModel[]> {
  return listModelsIn(defaultState, endpoint, options);
}

/**
 * Asks a local server's own API for the window a model is served with, from `state`.
 *
 * @internal
 */
export function servedWindowIn(state: RuntimeState, endpoint: Endpoint & { model: string }, options: WindowLookupOptions = {}): Promise<number | undefined> {
  const cache = slotOf(state, WINDOWS);
  return bounded(routeTo(state, endpoint), options.signal, (lookup) => readServedWindow(lookup, cache, endpoint.model, options));
}

/**
 * Asks a local server's own API for the window a model is served with: llama.cpp's `/props`
 * (`default_generation_settings.n_ctx`), then LM Studio's `/api/v0/models`
 * (`loaded_context_length`), then, on a server with neither, Ollama's `/api/ps` (the loaded
 * model's `context_length`; undefined while the model is not loaded).
 *
 * Both routes sit at the server's origin (the base URL less `/v1`) and are asked with the
 * endpoint's key. Undefined where neither gave a number. A route the server lacks (404, 405 or
 * 501) is not asked again for the life of the runtime; `/api/v0/models` is also left alone for
 * `listingMissMs` after any other failure, except a 401 or 403 (not open to this key) and the
 * 503 of a server still loading the model, which are asked again next time. Bounded and
 * abortable as {@link listModels} is.
 */
export function servedWindow(endpoint: Endpoint & { model: string }, options: WindowLookupOptions = {}): Promise<number | undefined> {
  return servedWindowIn(defaultState, endpoint, options);
}

/**
 * Finds the context window for a model on an endpoint, from `state`.
 *
 * @internal
 */
export async function contextLimitForIn(
  state: RuntimeState,
  endpoint: Endpoint & { model: string },
  contextLength?: number,
  options: WindowLookupOptions = {},
): Promise<number> {
  const operator = windowNumber(contextLength);
  if (operator !== undefined) return operator;
  try {
    if (typeof endpoint?.baseUrl !== "string" || typeof endpoint.model !== "string") return 0;
    const cache = slotOf(state, WINDOWS);
    const key = windowKey(endpoint, endpoint.model);
    const known = cache.windows.get(key);
    if (known !== undefined) return known;
    return await bounded(routeTo(state, endpoint), options.signal, (lookup) => readContextLimit(lookup, cache, key, endpoint.model, options));
  } catch (error) {
    if (options.signal?.aborted && error === options.signal.reason) throw error;
    return 0;
  }
}

/**
 * Finds the context window for a model on an endpoint, in tokens; zero where nothing says.
 *
 * The operator's `contextLength` wins outright, with no request made. Otherwise the model's
 * `/v1/models` entry is read: a window at its top level (`context_length`,
 * `max_context_window`, `max_model_len`, `context_window` or `n_ctx`), or llama.cpp's
 * `meta.n_ctx` (the window each slot serves: `-c` over `-np`), is trusted and nothing else is
 * asked. Otherwise the server's own API is asked with the endpoint's key ({@link servedWindow}),
 * and llama.cpp's trained window (`meta.n_ctx_train`) is used only when that gives no number. A
 * llama.cpp entry listed with `meta: null`, or a listing answered with the 503 of a server still
 * loading the model, is unknown for now: the answer is zero and nothing is remembered. A window
 * found is kept for the life of the runtime.
 *
 * The lookup is bounded at ten seconds, or the endpoint's request timeout where shorter; past it,
 * or for a server that cannot be reached, the answer is zero. An aborted `signal` rejects with
 * its reason and closes the request in flight; nothing else rejects.
 *
 * @param endpoint - The endpoint and the model name as the endpoint knows it.
 * @param contextLength - The operator's own window; it wins when above zero.
 * @param options - The run's `signal`, and the LM Studio miss timing.
 * @example
 * ```ts
 * const contextLimit = await contextLimitFor({ ...settings, model }, settings.contextLength, { signal });
 * ```
 */
export function contextLimitFor(endpoint: Endpoint & { model: string }, contextLength?: number, options: WindowLookupOptions = {}): Promise<number> {
  return contextLimitForIn(defaultState, endpoint, contextLength, options);
}
