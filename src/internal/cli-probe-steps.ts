/**
 * @module internal/cli-probe-steps
 * The probe's four chat requests — parameters, tools, json_schema, prefill — each sent through
 * negotiate so a refusal latches exactly as it would in a run, with the server's own words kept
 * for the latch it flipped.
 */
import type OpenAI from "openai";
import type { Message, ToolDefinition, Turn } from "../config.js";
import { effortFor, negotiate, type EndpointCapabilities, type ModelCapabilities } from "../capabilities.js";
import { buildBody } from "../request-body.js";
import { streamTurn, type StreamBody } from "../stream.js";
import { recoverToolCalls } from "../tool-calls.js";
import { isOverflow } from "../retry.js";
import type { RuntimeState } from "./state.js";
import { describeError } from "./error-body.js";
import { oneLine, readFailure } from "./cli-errors.js";
import type { ProbeCapability, ProbeFinding, ProbeOptions, ProbeReport, ProbeStatus } from "./cli-probe.js";

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

/** The server's own words for a refusal: the body's message where the SDK parsed one. */
export function wordsOf(error: unknown): string {
  const body = (error as { error?: unknown } | null)?.error;
  if (typeof body === "string") return oneLine(body);
  if (body && typeof body === "object") {
    const message = (body as { message?: unknown }).message;
    if (typeof message === "string") return oneLine(message);
  }
  const first = describeError(error).message.split(" | ")[0] ?? "";
  return oneLine(first.replace(/^\d{3}\s+/, ""));
}

/** The endpoint state one probe run shares between its steps. @internal */
export interface Probe {
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
export function finding(capability: ProbeCapability, label: string, status: ProbeStatus, detail: string, words?: string): ProbeFinding {
  return words ? { capability, label, status, detail, words } : { capability, label, status, detail };
}

/** Returns the probed model's record under the endpoint's, making it where the probe has not yet. */
export function modelRecord(probe: Probe): ModelCapabilities {
  const models = probe.supports.models;
  let record = models.get(probe.model);
  if (!record) {
    record = {
      legacyTokenLimit: true,
      chosenTemperature: true,
      structuredOutput: true,
      assistantPrefill: true,
      reasoningEffort: true,
      refusedEfforts: [],
      droppedFields: [],
    };
    models.set(probe.model, record);
  }
  return record;
}

/** Runs the first chat probe: usage in the stream, the max-tokens spelling, temperature and the effort rungs. */
export async function probeParameters(probe: Probe): Promise<ProbeFinding[]> {
  const messages: Message[] = [{ role: "user", content: "Reply with the single word: ok" }];
  const config = { model: probe.model, maxTokens: 16, temperature: 0, reasoningEffort: "none" };
  const outcome = await chat(probe, (supports, model) => buildBody(config, supports, model, messages));
  const model = modelRecord(probe);
  const refused = outcome.error === undefined ? undefined : wordsOf(outcome.error);
  const rows: ProbeFinding[] = [];
  const usage = outcome.turn?.usage;
  if (!probe.supports.usageInStream) rows.push(finding("usageInStream", "usage in the stream", "refused", "stream_options refused; usage is estimated", probe.words.usageInStream));
  else if (!usage) rows.push(finding("usageInStream", "usage in the stream", "unknown", "the request failed after negotiation", refused));
  else if (usage.prompt > 0 || usage.total > 0) rows.push(finding("usageInStream", "usage in the stream", "supported", `sent (${usage.prompt} prompt tokens${usage.cached > 0 ? `, ${usage.cached} cached` : ""})`));
  else rows.push(finding("usageInStream", "usage in the stream", "ignored", "stream_options accepted but no usage came"));
  rows.push(
    model.legacyTokenLimit
      ? finding("maxTokens", "max-tokens spelling", "supported", "max_tokens")
      : finding("maxTokens", "max-tokens spelling", "refused", "max_tokens refused; sends max_completion_tokens", probe.words.maxTokens),
  );
  rows.push(
    model.chosenTemperature
      ? finding("temperature", "temperature", "supported", "a chosen temperature (0) was taken")
      : finding("temperature", "temperature", "refused", "only the model's own temperature", probe.words.temperature),
  );
  if (!model.reasoningEffort) {
    rows.push(finding("reasoningEffort", "reasoning effort", "refused", "takes no reasoning_effort", probe.words.reasoningEffort));
  } else {
    const took = effortFor(model, "none");
    const skipped = model.refusedEfforts.length > 0 ? `; refused ${model.refusedEfforts.join(", ")}` : "";
    rows.push(finding("reasoningEffort", "reasoning effort", "supported", `lowest rung taken: ${took}${skipped}`, model.refusedEfforts.length > 0 ? probe.words.reasoningEffort : undefined));
  }
  return rows;
}

/** Runs the tools probe: strict schemas, and whether the server parses the call or leaves it as text. */
export async function probeTools(probe: Probe): Promise<ProbeFinding[]> {
  const messages: Message[] = [{ role: "user", content: 'Call the record_word tool with the word "ok". Do not answer in text.' }];
  const config = { model: probe.model, maxTokens: 64 };
  const outcome = await chat(probe, (supports, model) => buildBody(config, supports, model, messages, [PROBE_TOOL]));
  if (!outcome.turn) {
    const words = wordsOf(outcome.error);
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
  return [strict, finding("toolCalls", "tool calls", "not called", "the model answered without calling the tool")];
}

/** Runs the structured-output probe: a json_schema response_format. */
export async function probeJsonSchema(probe: Probe): Promise<ProbeFinding> {
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
  if (outcome.error !== undefined) return finding("jsonSchema", "json_schema response_format", "refused", "refused, and not as something to drop", wordsOf(outcome.error));
  if (!model.structuredOutput) return finding("jsonSchema", "json_schema response_format", "refused", "answers are held to JSON by parsing instead", probe.words.jsonSchema);
  return finding("jsonSchema", "json_schema response_format", "supported", "taken");
}

/** Runs the prefill probe: a trailing assistant message to carry on. */
export async function probePrefill(probe: Probe): Promise<ProbeFinding> {
  const messages: Message[] = [
    { role: "user", content: "Count from one to five." },
    { role: "assistant", content: "One, two," },
  ];
  const config = { model: probe.model, maxTokens: 16 };
  const outcome = await chat(probe, (supports, model) => buildBody(config, supports, model, messages));
  const status = describeError(outcome.error).status;
  if (outcome.error !== undefined && (status === 400 || status === 422) && !isOverflow(outcome.error)) {
    modelRecord(probe).assistantPrefill = false;
    return finding("prefill", "assistant prefill", "refused", "a cut-off answer is not continued", wordsOf(outcome.error));
  }
  if (outcome.error !== undefined) return finding("prefill", "assistant prefill", "unknown", "the request failed", wordsOf(outcome.error));
  return finding("prefill", "assistant prefill", "supported", "a trailing assistant message was taken");
}
