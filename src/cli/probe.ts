/**
 * @module cli/probe
 * What `agent-core probe` finds out about an endpoint and one model on it, with as few and as
 * small requests as it can: the served window and where it came from, then four tiny chat
 * requests whose refusals are negotiated away and latched in a private runtime state, so the
 * capability snapshot the probe writes is exactly what a run would have learned.
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type OpenAI from "openai";
import type { Message, ToolDefinition, Turn } from "../shapes/config.js";
import { capabilitiesForIn, effortFor, freshModelCapabilities, negotiate, type EndpointCapabilities, type ModelCapabilities } from "../wire/capabilities.js";
import { getClientIn, servedWindowIn, trimBaseUrl, type ListedModel } from "../wire/client.js";
import { buildBody } from "../wire/request-body.js";
import { isOverflow } from "../text/retry.js";
import { exportCapabilitiesIn } from "../wire/snapshot.js";
import { streamTurn, type StreamBody } from "../wire/stream.js";
import { recoverToolCalls } from "../text/tool-calls.js";
import { clearState, createState, type RuntimeState } from "../state/state.js";
import { describeError } from "../text/error-body.js";
import { CliFailure, readFailure, wordsOf } from "./errors.js";
import { readListing } from "./listing.js";
import { windowNumber } from "../wire/window-lookup.js";
import type { ProbeCapability, ProbeFinding, ProbeOptions, ProbeReport, ProbeRequest, ProbeStatus } from "./probe-types.js";

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
    maxTokens: String(model?.legacyTokenLimit),
    temperature: String(model?.chosenTemperature),
    jsonSchema: String(model?.structuredOutput),
    reasoningEffort: `${String(model?.reasoningEffort)}:${(model?.refusedEfforts ?? []).join(",")}`,
    droppedFields: (model?.droppedFields ?? []).join(","),
  };
}

/** The endpoint state one probe run shares between its steps. */
interface Probe {
  state: RuntimeState;
  client: OpenAI;
  supports: EndpointCapabilities;
  model: string;
  options: ProbeOptions;
  tokens: ProbeReport["tokens"];
  /** The server's words per latch that flipped. */
  words: Partial<Record<string, string>>;
}

interface ChatOutcome {
  turn?: Turn;
  error?: unknown;
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
          return await streamTurn(probe.client, sent, { produced, idleMs, firstChunkMs: idleMs, ...(probe.options.signal ? { signal: probe.options.signal } : {}) });
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
    if (failure.kind === "interrupted" || failure.kind === "unreachable" || failure.kind === "unauthorized" || failure.kind === "unknownModel" || failure.kind === "notOpenAi") {
      throw failure;
    }
    return { error };
  }
}

/** Makes one row of the table. */
function finding(capability: ProbeCapability, label: string, status: ProbeStatus, detail: string, words?: string): ProbeFinding {
  return words ? { capability, label, status, detail, words } : { capability, label, status, detail };
}

/** Returns the probed model's record under the endpoint's, making it where the probe has not yet. */
function modelRecord(probe: Probe): ModelCapabilities {
  const models = probe.supports.models;
  let record = models.get(probe.model);
  if (!record) {
    record = freshModelCapabilities();
    models.set(probe.model, record);
  }
  return record;
}

/** Whether a failed request was the server refusing it (a 4xx that is not a rate limit, a timeout or an overflow). */
function isRefusal(error: unknown): boolean {
  const status = describeError(error).status;
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429 && !isOverflow(error);
}

/** Runs the first chat probe: usage in the stream, the max-tokens spelling, temperature and the effort rungs. */
async function probeParameters(probe: Probe): Promise<ProbeFinding[]> {
  const messages: Message[] = [{ role: "user", content: "Reply with the single word: ok" }];
  const config = { model: probe.model, maxTokens: 16, temperature: 0, reasoningEffort: "none" };
  const outcome = await chat(probe, (supports, model) => buildBody(config, supports, model, messages));
  // The first plain request failing for any reason but a refusal leaves nothing worth probing.
  if (outcome.error !== undefined && !isRefusal(outcome.error)) throw readFailure(outcome.error, probe.options.baseUrl, probe.model);
  const model = modelRecord(probe);
  const refused = outcome.error === undefined ? undefined : wordsOf(outcome.error);
  const rows: ProbeFinding[] = [];
  const usage = outcome.turn?.usage;
  if (!probe.supports.usageInStream) rows.push(finding("usageInStream", "usage in the stream", "refused", "stream_options refused; usage is estimated", probe.words.usageInStream));
  else if (!usage) rows.push(finding("usageInStream", "usage in the stream", "unknown", "the request failed after negotiation", refused));
  else if (usage.prompt > 0 || usage.total > 0) rows.push(finding("usageInStream", "usage in the stream", "supported", `sent (${usage.prompt} prompt tokens${usage.cached > 0 ? `, ${usage.cached} cached` : ""})`));
  else rows.push(finding("usageInStream", "usage in the stream", "ignored", "stream_options accepted but no usage came"));
  // A flag still on after a failed request was never tried through to an answer.
  const untried = (capability: ProbeCapability, label: string): ProbeFinding => finding(capability, label, "unknown", "the request failed after negotiation", refused);
  rows.push(
    !model.legacyTokenLimit
      ? finding("maxTokens", "max-tokens spelling", "refused", "max_tokens refused; sends max_completion_tokens", probe.words.maxTokens)
      : outcome.error !== undefined
        ? untried("maxTokens", "max-tokens spelling")
        : finding("maxTokens", "max-tokens spelling", "supported", "max_tokens"),
  );
  rows.push(
    !model.chosenTemperature
      ? finding("temperature", "temperature", "refused", "only the model's own temperature", probe.words.temperature)
      : outcome.error !== undefined
        ? untried("temperature", "temperature")
        : finding("temperature", "temperature", "supported", "a chosen temperature (0) was taken"),
  );
  if (!model.reasoningEffort) {
    rows.push(finding("reasoningEffort", "reasoning effort", "refused", "takes no reasoning_effort", probe.words.reasoningEffort));
  } else if (outcome.error !== undefined) {
    rows.push(untried("reasoningEffort", "reasoning effort"));
  } else {
    const took = effortFor(model, "none");
    const skipped = model.refusedEfforts.length > 0 ? `; refused ${model.refusedEfforts.join(", ")}` : "";
    rows.push(finding("reasoningEffort", "reasoning effort", "supported", `lowest rung taken: ${took}${skipped}`, model.refusedEfforts.length > 0 ? probe.words.reasoningEffort : undefined));
  }
  return rows;
}

/** Runs the tools probe: strict schemas, and whether the server parses the call or leaves it as text. */
async function probeTools(probe: Probe): Promise<ProbeFinding[]> {
  const messages: Message[] = [{ role: "user", content: 'Call the record_word tool with the word "ok". Do not answer in text.' }];
  const config = { model: probe.model, maxTokens: 64 };
  const outcome = await chat(probe, (supports, model) => buildBody(config, supports, model, messages, [PROBE_TOOL]));
  if (!outcome.turn) {
    const words = wordsOf(outcome.error);
    if (!isRefusal(outcome.error)) {
      return [
        finding("strictSchemas", "strict tool schemas", "unknown", "the request with tools failed", words),
        finding("toolCalls", "tool calls", "unknown", "the request with tools failed", words),
      ];
    }
    return [
      finding("strictSchemas", "strict tool schemas", "unknown", "tools were refused", undefined),
      finding("toolCalls", "tool calls", "refused", "the request with tools was refused", words),
    ];
  }
  const strict = probe.supports.strictSchemas
    ? finding("strictSchemas", "strict tool schemas", "supported", "strict: true was taken")
    : finding("strictSchemas", "strict tool schemas", "refused", "sends relaxed schemas", probe.words.strictSchemas);
  const turn = outcome.turn;
  if (turn.toolCalls.length > 0) return [strict, finding("toolCalls", "tool calls", "supported", "parsed by the server into tool_calls")];
  if (recoverToolCalls(turn.content, [PROBE_TOOL.function.name]).calls.length > 0) {
    return [strict, finding("toolCalls", "tool calls", "as text", "left in the reply as text; recoverToolCalls reads them")];
  }
  const why = turn.finishReason === "length" ? "the reply hit the 64-token ceiling before any call" : "the model answered without calling the tool";
  return [strict, finding("toolCalls", "tool calls", "not called", why)];
}

/** Runs the structured-output probe: a json_schema response_format. */
async function probeJsonSchema(probe: Probe): Promise<ProbeFinding> {
  const messages: Message[] = [{ role: "user", content: 'Reply with JSON: {"word": "ok"}' }];
  const config = { model: probe.model, maxTokens: 32 };
  const outcome = await chat(probe, (supports, model) => {
    const body: StreamBody = buildBody(config, supports, model, messages);
    if (model?.structuredOutput !== false) {
      return { ...body, response_format: { type: "json_schema", json_schema: { name: "probe_word", strict: supports.strictSchemas, schema: WORD_SCHEMA } } };
    }
    return body;
  });
  const model = modelRecord(probe);
  if (outcome.error !== undefined && !isRefusal(outcome.error)) return finding("jsonSchema", "json_schema response_format", "unknown", "the request failed", wordsOf(outcome.error));
  if (outcome.error !== undefined) return finding("jsonSchema", "json_schema response_format", "refused", "refused, and not as something to drop", wordsOf(outcome.error));
  if (!model.structuredOutput) return finding("jsonSchema", "json_schema response_format", "refused", "answers are held to JSON by parsing instead", probe.words.jsonSchema);
  return finding("jsonSchema", "json_schema response_format", "supported", "taken");
}

/** Runs the prefill probe: a trailing assistant message to carry on. */
async function probePrefill(probe: Probe): Promise<ProbeFinding> {
  const messages: Message[] = [
    { role: "user", content: "Count from one to five." },
    { role: "assistant", content: "One, two," },
  ];
  const config = { model: probe.model, maxTokens: 16 };
  const outcome = await chat(probe, (supports, model) => buildBody(config, supports, model, messages));
  const status = describeError(outcome.error).status;
  if (outcome.error !== undefined && (status === 400 || status === 422) && isRefusal(outcome.error)) {
    modelRecord(probe).assistantPrefill = false;
    return finding("prefill", "assistant prefill", "refused", "a cut-off answer is not continued", wordsOf(outcome.error));
  }
  if (outcome.error !== undefined) return finding("prefill", "assistant prefill", "unknown", "the request failed", wordsOf(outcome.error));
  return finding("prefill", "assistant prefill", "supported", "a trailing assistant message was taken");
}

/** The served window: a listing field, then the server's own routes, then the trained window. */
async function findWindow(probe: Probe, entry: ListedModel | undefined, requests: ProbeRequest[]): Promise<ProbeReport["window"]> {
  for (const key of WINDOW_KEYS) {
    const tokens = windowNumber(entry?.[key]);
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
  const trained = windowNumber(meta && typeof meta === "object" ? (meta as { n_ctx_train?: unknown }).n_ctx_train : undefined);
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
  const base = trimBaseUrl(options.baseUrl);
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
    if (!options.model && listing && listing.length > 1) progress(`no --model given: probing ${model}, the first of the ${listing.length} models listed`);
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
