/**
 * @module cli/probe
 * What `agent-core probe` finds out about an endpoint and one model on it, with as few and as
 * small requests as it can: the served window and where it came from, then four tiny chat
 * requests whose refusals are negotiated away and latched in a runtime of its own, so the
 * capability snapshot the probe writes is exactly what a run would have learned. It uses the
 * package's public API only, as any other user of it would.
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type OpenAI from "openai";
import {
  buildBody,
  negotiate,
  relaxSchema,
  sanitizeSchema,
  streamTurn,
  type EndpointCapabilities,
  type ListedModel,
  type Message,
  type ModelCapabilities,
  type StreamBody,
  type ToolDefinition,
} from "../index.js";
import { createRuntime, type Runtime } from "../runtime.js";
import { CliFailure, readFailure, wordsOf } from "./errors.js";
import { readListing } from "./listing.js";
import { findingsFrom, isRefusal, statusOf, type ChatOutcome, type ProbeEvidence } from "./probe-rows.js";
import type { ProbeFinding, ProbeOptions, ProbeReport, ProbeRequest } from "./probe-types.js";

export type { ProbeCapability, ProbeFinding, ProbeOptions, ProbeReport, ProbeRequest, ProbeStatus } from "./probe-types.js";
export { readListing } from "./listing.js";
export { wordsOf } from "./errors.js";

const WINDOW_KEYS = ["context_length", "max_context_window", "max_model_len", "context_window", "n_ctx"] as const;

const PROBE_TOOL: ToolDefinition = {
  type: "function",
  function: {
    name: "record_word",
    description: "Records one word.",
    parameters: { type: "object", properties: { word: { type: "string", description: "The word to record." } }, required: ["word"] },
  },
};

const WORD_SCHEMA = { type: "object", properties: { word: { type: "string" } }, required: ["word"], additionalProperties: false };

type Latches = Record<string, string>;

function latchesOf(supports: EndpointCapabilities, model: ModelCapabilities | undefined): Latches {
  return {
    usageInStream: String(supports.usageInStream),
    strictSchemas: String(supports.strictSchemas),
    grammarConstrained: String(supports.grammarConstrained),
    maxTokens: String(model?.legacyTokenLimit),
    temperature: String(model?.chosenTemperature),
    jsonSchema: String(model?.structuredOutput),
    reasoningEffort: `${String(model?.reasoningEffort)}:${(model?.refusedEfforts ?? []).join(",")}`,
    droppedFields: (model?.droppedFields ?? []).join(","),
  };
}

/** Reads a window size: a positive number (or digits in a string), rounded down; undefined otherwise. */
function windowOf(value: unknown): number | undefined {
  if (typeof value === "string" && /^\d+$/.test(value.trim())) return windowOf(Number(value));
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
}

/** The endpoint state one probe run shares between its steps. */
interface Probe {
  runtime: Runtime;
  client: OpenAI;
  supports: EndpointCapabilities;
  model: string;
  options: ProbeOptions;
  tokens: ProbeReport["tokens"];
  /** The server's words per latch that flipped. */
  words: Partial<Record<string, string>>;
}

/** Sends one chat probe through negotiate, remembering the server's words for each latch a refusal flipped. */
async function chat(probe: Probe, build: (supports: EndpointCapabilities, model: ModelCapabilities | undefined) => StreamBody): Promise<ChatOutcome> {
  let before: Latches | undefined;
  let pending: unknown;
  let sent: StreamBody | undefined;
  const note = (supports: EndpointCapabilities, model: ModelCapabilities | undefined): void => {
    const now = latchesOf(supports, model);
    if (pending !== undefined && before) {
      for (const [name, value] of Object.entries(now)) if (before[name] !== value) probe.words[name] = wordsOf(pending);
    }
    before = now;
    pending = undefined;
  };
  const idleMs = (probe.options.timeoutSeconds ?? 60) * 1000;
  try {
    const turn = await negotiate(
      probe.supports,
      async (supports, produced, model) => {
        note(supports, model);
        sent = build(supports, model);
        try {
          return await streamTurn(probe.client, sent, {
            produced,
            idleMs,
            firstChunkMs: idleMs,
            ...(probe.options.signal ? { signal: probe.options.signal } : {}),
          });
        } catch (error) {
          pending = error;
          throw error;
        }
      },
      { model: probe.model, sentBody: () => sent },
    );
    const usage = turn.usage;
    if (usage.prompt === 0 && usage.total === 0) probe.tokens.unreported += 1;
    probe.tokens.prompt += usage.prompt;
    probe.tokens.completion += usage.completion;
    return { turn };
  } catch (error) {
    const failure = readFailure(error, probe.options.baseUrl, probe.model);
    if (
      failure.kind === "interrupted" ||
      failure.kind === "unreachable" ||
      failure.kind === "unauthorized" ||
      failure.kind === "unknownModel" ||
      failure.kind === "notOpenAi"
    ) {
      throw failure;
    }
    return { error };
  }
}

/** Runs the first chat probe: usage in the stream, the max-tokens spelling, temperature and the effort rungs. */
async function probeParameters(probe: Probe): Promise<ChatOutcome> {
  const messages: Message[] = [{ role: "user", content: "Reply with the single word: ok" }];
  const config = { model: probe.model, maxTokens: 16, temperature: 0, reasoningEffort: "none" };
  const outcome = await chat(probe, (supports, model) => buildBody(config, supports, model, messages));
  // The first plain request failing for any reason but a refusal leaves nothing worth probing.
  if (outcome.error !== undefined && !isRefusal(outcome.error)) throw readFailure(outcome.error, probe.options.baseUrl, probe.model);
  return outcome;
}

/** Runs the tools probe: one strict (or, on a grammar server, relaxed) tool, to see whether the server parses the call. */
function probeTools(probe: Probe): Promise<ChatOutcome> {
  const messages: Message[] = [{ role: "user", content: 'Call the record_word tool with the word "ok". Do not answer in text.' }];
  const config = { model: probe.model, maxTokens: 64 };
  return chat(probe, (supports, model) => buildBody(config, supports, model, messages, [PROBE_TOOL]));
}

/** Runs the structured-output probe: a json_schema response_format in the form a run would send it. */
function probeJsonSchema(probe: Probe): Promise<ChatOutcome> {
  const messages: Message[] = [{ role: "user", content: 'Reply with JSON: {"word": "ok"}' }];
  const config = { model: probe.model, maxTokens: 32 };
  return chat(probe, (supports, model) => {
    const body: StreamBody = buildBody(config, supports, model, messages);
    if (model?.structuredOutput === false) return body;
    const strict = supports.strictSchemas && !supports.grammarConstrained;
    const json_schema = strict
      ? { name: "probe_word", strict: true, schema: sanitizeSchema(WORD_SCHEMA) }
      : { name: "probe_word", schema: relaxSchema(WORD_SCHEMA) };
    return { ...body, response_format: { type: "json_schema", json_schema } };
  });
}

/**
 * Runs the prefill probe: a trailing assistant message to carry on; a 400 or 422 for it latches
 * assistantPrefill off, unless it says what the first probe's failure said (then it is not about
 * the prefill).
 */
async function probePrefill(probe: Probe, parameters: ChatOutcome): Promise<ChatOutcome> {
  const messages: Message[] = [
    { role: "user", content: "Count from one to five." },
    { role: "assistant", content: "One, two," },
  ];
  const config = { model: probe.model, maxTokens: 16 };
  const outcome = await chat(probe, (supports, model) => buildBody(config, supports, model, messages));
  const status = statusOf(outcome.error);
  const same = parameters.error !== undefined && wordsOf(parameters.error) === wordsOf(outcome.error);
  if (outcome.error !== undefined && (status === 400 || status === 422) && isRefusal(outcome.error) && !same) {
    probe.runtime.modelCapabilitiesFor(probe.options.baseUrl, probe.options.apiKey, probe.model).assistantPrefill = false;
  }
  return outcome;
}

/** The served window: a listing field, then the server's own routes, then the trained window. */
async function findWindow(probe: Probe, entry: ListedModel | undefined, requests: ProbeRequest[]): Promise<ProbeReport["window"]> {
  for (const key of WINDOW_KEYS) {
    const tokens = windowOf(entry?.[key]);
    if (tokens !== undefined) return { tokens, source: `the model listing (${key})` };
  }
  if (entry && entry.meta === null) return { tokens: 0, source: "unknown: the listing says the model is still loading (meta: null)" };
  const meta = entry?.meta && typeof entry.meta === "object" ? (entry.meta as { n_ctx?: unknown; n_ctx_train?: unknown }) : undefined;
  const listed = windowOf(meta?.n_ctx);
  if (listed !== undefined) return { tokens: listed, source: "the model listing (meta.n_ctx, the window each slot serves)" };
  const from = requests.length;
  const endpoint = {
    baseUrl: probe.options.baseUrl,
    apiKey: probe.options.apiKey ?? "",
    model: probe.model,
    ...(probe.options.headers ? { headers: probe.options.headers } : {}),
  };
  const served = await probe.runtime.servedWindow(endpoint, probe.options.signal ? { signal: probe.options.signal } : {});
  if (served !== undefined) {
    const answered = requests.slice(from).filter((request) => request.status !== undefined && request.status < 300);
    const route = answered.map((request) => request.path.split("?")[0]).pop() ?? "";
    const field = route.endsWith("/props") ? "default_generation_settings.n_ctx" : route.endsWith("/api/ps") ? "context_length" : "loaded_context_length";
    return { tokens: served, source: `the server's own ${route || "API"} (${field})` };
  }
  const trained = windowOf(meta?.n_ctx_train);
  if (trained !== undefined) return { tokens: trained, source: "the trained window (meta.n_ctx_train); the served one was not reported" };
  return { tokens: 0, source: "unknown: nothing the endpoint answered names it; set contextLength" };
}

/** Counts every request to the endpoint's origin off the connection pool's diagnostics channel, until `stop` is called. */
function countRequests(origin: string): { requests: ProbeRequest[]; stop: () => void } {
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
  return {
    requests,
    stop: () => {
      unsubscribe("undici:request:create", onCreate);
      unsubscribe("undici:request:headers", onHeaders);
    },
  };
}

/**
 * Finds out what an endpoint and one model on it support, learning the latches in a runtime of
 * its own, and returns the table, the requests and tokens spent, and the snapshot.
 *
 * Throws a {@link CliFailure} for an endpoint that cannot be reached, refuses the key, is not an
 * OpenAI-compatible API, does not know the model, or for an aborted `signal`.
 */
export async function probeEndpoint(options: ProbeOptions): Promise<ProbeReport> {
  const runtime = options.runtime ?? createRuntime(options.keySalt !== undefined ? { keySalt: options.keySalt } : {});
  const base = options.baseUrl.trim().replace(/\/+$/, "");
  const counted = countRequests(new URL(base).origin);
  const progress = (line: string): void => {
    try {
      options.onProgress?.(line);
    } catch {
      // A progress sink that throws does not stop the probe.
    }
  };
  try {
    progress("probing the model listing (GET /models)");
    const listed = await readListing(options, base);
    // A failing listing is the answer where the model was to come from it, or where the model is loading.
    if (CliFailure.is(listed) && (listed.kind === "loading" || options.model === undefined)) throw listed;
    if (CliFailure.is(listed)) progress(`${listed.message.replace(/; with no listing.*$/, "")}; probing ${options.model ?? ""} without the listing`);
    const listing = Array.isArray(listed) ? listed : undefined;
    const model = options.model ?? listing?.[0]?.id;
    if (!model) throw new CliFailure("unknownModel", `${base} lists no models to choose from; pass --model NAME.`);
    if (!options.model && listing && listing.length > 1) progress(`no --model given: probing ${model}, the first of the ${listing.length} models listed`);
    const entry = listing?.find((item) => item.id === model);
    const headers = options.headers && Object.keys(options.headers).length > 0 ? { headers: options.headers } : {};
    const endpoint = { baseUrl: base, apiKey: options.apiKey ?? "", requestTimeoutSeconds: options.timeoutSeconds ?? 60, ...headers };
    const probe: Probe = {
      runtime,
      client: runtime.getClient(endpoint),
      supports: runtime.capabilitiesFor(base, options.apiKey),
      model,
      options: { ...options, baseUrl: base },
      tokens: { prompt: 0, completion: 0, unreported: 0 },
      words: {},
    };
    progress("probing the served window (the listing, then /props, /api/v0/models or /api/ps)");
    const window = await findWindow(probe, entry, counted.requests);
    const findings: ProbeFinding[] = [
      {
        capability: "window",
        label: "served window",
        status: window.tokens > 0 ? "supported" : "unknown",
        detail: window.tokens > 0 ? `${window.tokens} tokens, from ${window.source}` : window.source,
      },
    ];
    progress("probing usage in the stream, the max-tokens spelling, temperature and reasoning effort (one chat request, one more per refusal)");
    let parameters: ChatOutcome;
    try {
      parameters = await probeParameters(probe);
    } catch (error) {
      const failure = readFailure(error, base, model);
      if (failure.kind === "unknownModel" && listing && listing.length > 0 && !entry) {
        throw new CliFailure(
          "unknownModel",
          `${failure.message} It lists: ${listing
            .slice(0, 8)
            .map((item) => item.id)
            .join(", ")}.`,
          failure.cause,
        );
      }
      throw failure;
    }
    progress("probing schemas and tool-call parsing (the listing as a run reads it, then one chat request with one tool)");
    // A run reads the listing before its first request with tools: that is where it learns a grammar server.
    await runtime.listModels(endpoint, options.signal ? { signal: options.signal } : {}).catch((error: unknown) => {
      if (options.signal?.aborted) throw readFailure(options.signal.reason ?? error, base, model);
    });
    const tools = await probeTools(probe);
    progress("probing json_schema response_format (one chat request)");
    const json = await probeJsonSchema(probe);
    progress("probing assistant prefill (one chat request ending in an assistant message)");
    const prefill = await probePrefill(probe, parameters);
    const outcomes = [parameters, tools, json, prefill];
    if (outcomes.every((outcome) => outcome.turn === undefined)) {
      // Nothing reached a model: every refusal may be a router's or a proxy's, so none is a fact about the model.
      const first = outcomes.find((outcome) => outcome.error !== undefined)?.error;
      const failure = readFailure(first, base, model);
      throw new CliFailure(
        failure.kind,
        `Every chat request of the probe failed, so nothing was learned and no snapshot is written; the first: ${failure.message}`,
        first,
      );
    }
    const owner = typeof entry?.owned_by === "string" ? entry.owned_by : undefined;
    const evidence: ProbeEvidence = { parameters, tools, json, prefill, words: probe.words, toolName: PROBE_TOOL.function.name, ...(owner ? { owner } : {}) };
    // Every row and the snapshot are read off the records as the last probe left them.
    findings.push(...findingsFrom(probe.supports, runtime.modelCapabilitiesFor(base, options.apiKey, model), evidence));
    return {
      baseUrl: base,
      model,
      listed: entry !== undefined,
      window,
      findings,
      requests: counted.requests,
      tokens: probe.tokens,
      snapshot: runtime.exportCapabilities(),
    };
  } finally {
    counted.stop();
    if (!options.runtime) runtime.reset();
  }
}
