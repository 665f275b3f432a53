/**
 * @module internal/cli-probe
 * What `agent-core probe` finds out about an endpoint and one model on it, with as few and as
 * small requests as it can: the served window and where it came from, then four tiny chat
 * requests whose refusals are negotiated away and latched in a private runtime state, so the
 * capability snapshot the probe writes is exactly what a run would have learned.
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { capabilitiesForIn } from "../capabilities.js";
import { getClientIn, servedWindowIn, type ListedModel } from "../client.js";
import { exportCapabilitiesIn, type CapabilitiesSnapshot } from "../snapshot.js";
import { clearState, createState, type RuntimeState } from "./state.js";
import { CliFailure, looksLikeHtml, oneLine, readFailure } from "./cli-errors.js";
import { finding, probeJsonSchema, probeParameters, probePrefill, probeTools, type Probe } from "./cli-probe-steps.js";

export { wordsOf } from "./cli-probe-steps.js";

/** How a capability came out of the probe. */
export type ProbeStatus = "supported" | "refused" | "ignored" | "as text" | "not called" | "unknown";

/** The capabilities the probe reports on, in the order it reports them. */
export type ProbeCapability =
  | "window"
  | "usageInStream"
  | "maxTokens"
  | "temperature"
  | "reasoningEffort"
  | "strictSchemas"
  | "toolCalls"
  | "jsonSchema"
  | "prefill";

/** One row of the probe's table. */
export interface ProbeFinding {
  /** Which capability. */
  capability: ProbeCapability;
  /** The capability in words. */
  label: string;
  /** How it came out. */
  status: ProbeStatus;
  /** What was found, in a short phrase. */
  detail: string;
  /** The server's own words, where it refused. */
  words?: string;
}

/** One HTTP request the probe sent, as the connection pool saw it. */
export interface ProbeRequest {
  method: string;
  path: string;
  /** The response status; absent where none came. */
  status?: number;
}

/** Everything the probe found. */
export interface ProbeReport {
  /** The base URL probed. */
  baseUrl: string;
  /** The model probed. */
  model: string;
  /** Whether the endpoint's listing named the model. */
  listed: boolean;
  /** The served window in tokens (0 where nothing said) and where it came from. */
  window: { tokens: number; source: string };
  /** The rows of the table, window first. */
  findings: ProbeFinding[];
  /** Every request sent, in order. */
  requests: ProbeRequest[];
  /** Tokens the chat requests cost as the endpoint reported them; `unreported` counts answers that carried no usage. */
  tokens: { prompt: number; completion: number; unreported: number };
  /** The latches learned, as importCapabilities loads them. */
  snapshot: CapabilitiesSnapshot;
}

/** Options of {@link probeEndpoint}. */
export interface ProbeOptions {
  /** The endpoint's base URL. */
  baseUrl: string;
  /** The key; absent sends none. */
  apiKey?: string;
  /** The model; absent takes the first one the endpoint lists. */
  model?: string;
  /** The runtime state the latches are learned in. @default a fresh one, cleared when the probe ends */
  state?: RuntimeState;
  /** Stops the probe. */
  signal?: AbortSignal;
  /** Told one line as each probe starts. */
  onProgress?: (line: string) => void;
  /** How long any one request may stay silent, in seconds. @default 60 */
  timeoutSeconds?: number;
}

const WINDOW_KEYS = ["context_length", "max_context_window", "max_model_len", "context_window", "n_ctx"] as const;

/**
 * GETs the model listing with plain fetch, so an HTML page or a refused key is told apart from a
 * missing route; undefined where the server has no listing.
 *
 * Throws a {@link CliFailure} where nothing answers, the key is refused or the answer is not an
 * OpenAI-compatible API's.
 */
export async function readListing(options: Pick<ProbeOptions, "apiKey" | "signal" | "timeoutSeconds">, base: string): Promise<ListedModel[] | undefined> {
  const signals = [AbortSignal.timeout((options.timeoutSeconds ?? 60) * 1000), ...(options.signal ? [options.signal] : [])];
  let response: Response;
  let text: string;
  try {
    response = await fetch(`${base}/models`, {
      headers: { accept: "application/json", ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
      signal: AbortSignal.any(signals),
    });
    text = await response.text();
  } catch (error) {
    throw readFailure(options.signal?.aborted ? options.signal.reason ?? error : error, base);
  }
  if (response.status === 401 || response.status === 403) {
    throw new CliFailure("unauthorized", `${base} refused the key (HTTP ${response.status}): ${messageIn(text) || "no reason given"}. Pass --api-key-env with the variable that holds the key.`);
  }
  const type = response.headers.get("content-type") ?? "";
  if (/html/i.test(type) || looksLikeHtml(text)) {
    throw new CliFailure("notOpenAi", `${base} answered GET /models with an HTML page (HTTP ${response.status}), not an OpenAI-compatible API; check the URL ends at the API root, usually /v1.`);
  }
  if (!response.ok) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new CliFailure("notOpenAi", `${base} answered GET /models with something that is not JSON (${oneLine(text, 80) || "an empty body"}); it does not look like an OpenAI-compatible API.`);
  }
  const data = Array.isArray(body) ? body : body && typeof body === "object" ? (body as { data?: unknown }).data : undefined;
  if (!Array.isArray(data)) {
    throw new CliFailure("notOpenAi", `${base} answered GET /models with JSON that is not a model listing (${oneLine(text, 80)}); it does not look like an OpenAI-compatible API.`);
  }
  return data.filter((entry): entry is ListedModel => !!entry && typeof entry === "object" && typeof (entry as { id?: unknown }).id === "string");
}

function messageIn(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown; detail?: unknown };
    const error = parsed.error;
    if (typeof error === "string") return oneLine(error);
    if (error && typeof error === "object" && typeof (error as { message?: unknown }).message === "string") return oneLine((error as { message: string }).message);
    if (typeof parsed.message === "string") return oneLine(parsed.message);
    if (typeof parsed.detail === "string") return oneLine(parsed.detail);
  } catch {
    // Not JSON: the text itself is the reason.
  }
  return oneLine(text, 160);
}

function positive(value: unknown): number | undefined {
  const number = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : value;
  return typeof number === "number" && Number.isFinite(number) && number > 0 ? Math.floor(number) : undefined;
}

/** The served window: a listing field, then the server's own routes, then the trained window. */
async function findWindow(probe: Probe, entry: ListedModel | undefined, requests: ProbeRequest[]): Promise<ProbeReport["window"]> {
  for (const key of WINDOW_KEYS) {
    const tokens = positive(entry?.[key]);
    if (tokens !== undefined) return { tokens, source: `the model listing (${key})` };
  }
  if (entry && entry.meta === null) return { tokens: 0, source: "unknown: the listing says the model is still loading (meta: null)" };
  const from = requests.length;
  const served = await servedWindowIn(probe.state, { baseUrl: probe.options.baseUrl, apiKey: probe.options.apiKey ?? "", model: probe.model }, probe.options.signal ? { signal: probe.options.signal } : {});
  if (served !== undefined) {
    const answered = requests.slice(from).filter((request) => request.status !== undefined && request.status < 300);
    const route = answered.map((request) => request.path.split("?")[0]).pop() ?? "";
    const field = route.endsWith("/props") ? "default_generation_settings.n_ctx" : "loaded_context_length";
    return { tokens: served, source: `the server's own ${route || "API"} (${field})` };
  }
  const meta = entry?.meta;
  const trained = positive(meta && typeof meta === "object" ? (meta as { n_ctx_train?: unknown }).n_ctx_train : undefined);
  if (trained !== undefined) return { tokens: trained, source: "the trained window (meta.n_ctx_train); the served one was not reported" };
  return { tokens: 0, source: "unknown: nothing the endpoint answered names it; set contextLength" };
}

/**
 * Finds out what an endpoint and one model on it support, learning the latches in a private
 * runtime state, and returns the table, the requests and tokens spent, and the snapshot.
 *
 * Throws a {@link CliFailure} for an endpoint that cannot be reached, refuses the key, is not an
 * OpenAI-compatible API, does not know the model, or for an aborted `signal`.
 */
export async function probeEndpoint(options: ProbeOptions): Promise<ProbeReport> {
  const state = options.state ?? createState();
  const base = options.baseUrl.trim().replace(/\/+$/, "");
  const origin = new URL(base).origin;
  const requests: ProbeRequest[] = [];
  const pending = new WeakMap<object, ProbeRequest>();
  const onCreate = (message: unknown): void => {
    const request = (message as { request?: { origin?: unknown; method?: unknown; path?: unknown } }).request;
    if (!request || String(request.origin) !== origin) return;
    const entry: ProbeRequest = { method: String(request.method), path: String(request.path) };
    requests.push(entry);
    pending.set(request, entry);
  };
  const onHeaders = (message: unknown): void => {
    const { request, response } = message as { request?: object; response?: { statusCode?: unknown } };
    const entry = request ? pending.get(request) : undefined;
    if (entry && typeof response?.statusCode === "number") entry.status = response.statusCode;
  };
  subscribe("undici:request:create", onCreate);
  subscribe("undici:request:headers", onHeaders);
  const progress = (line: string): void => {
    try {
      options.onProgress?.(line);
    } catch {
      // A progress sink that throws does not stop the probe.
    }
  };
  try {
    progress("probing the model listing (GET /models)");
    const listing = await readListing(options, base);
    const model = options.model ?? listing?.[0]?.id;
    if (!model) throw new CliFailure("unknownModel", `${base} lists no models to choose from; pass --model NAME.`);
    const entry = listing?.find((item) => item.id === model);
    const endpoint = { baseUrl: base, apiKey: options.apiKey ?? "" };
    const probe: Probe = {
      state,
      client: getClientIn(state, { ...endpoint, requestTimeoutSeconds: options.timeoutSeconds ?? 60 }),
      supports: capabilitiesForIn(state, base, options.apiKey),
      model,
      options: { ...options, baseUrl: base },
      tokens: { prompt: 0, completion: 0, unreported: 0 },
      words: {},
    };
    progress("probing the served window (the listing, then /props or /api/v0/models)");
    const window = await findWindow(probe, entry, requests);
    const findings: ProbeFinding[] = [finding("window", "served window", window.tokens > 0 ? "supported" : "unknown", window.tokens > 0 ? `${window.tokens} tokens, from ${window.source}` : window.source)];
    progress("probing usage in the stream, the max-tokens spelling, temperature and reasoning effort (one chat request, one more per refusal)");
    try {
      findings.push(...(await probeParameters(probe)));
    } catch (error) {
      const failure = readFailure(error, base, model);
      if (failure.kind === "unknownModel" && listing && listing.length > 0 && !entry) {
        throw new CliFailure("unknownModel", `${failure.message} It lists: ${listing.slice(0, 8).map((item) => item.id).join(", ")}.`, failure.cause);
      }
      throw failure;
    }
    progress("probing strict tool schemas and tool-call parsing (one chat request with one tool)");
    findings.push(...(await probeTools(probe)));
    progress("probing json_schema response_format (one chat request)");
    findings.push(await probeJsonSchema(probe));
    progress("probing assistant prefill (one chat request ending in an assistant message)");
    findings.push(await probePrefill(probe));
    return {
      baseUrl: base,
      model,
      listed: entry !== undefined,
      window,
      findings,
      requests,
      tokens: probe.tokens,
      snapshot: exportCapabilitiesIn(state),
    };
  } finally {
    unsubscribe("undici:request:create", onCreate);
    unsubscribe("undici:request:headers", onHeaders);
    if (!options.state) clearState(state);
  }
}
