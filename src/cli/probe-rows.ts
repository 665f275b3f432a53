/**
 * @module cli/probe-rows
 * The probe's table, read once every probe has run: each latch's row from the endpoint's and the
 * model's records as they ended (the same records the snapshot is written from, so the two never
 * disagree), and from what each probe's request came back with where a record cannot say.
 */
import { effortFor, isOverflow, recoverToolCalls, type EndpointCapabilities, type ModelCapabilities, type Turn } from "../index.js";
import { wordsOf } from "./errors.js";
import type { ProbeCapability, ProbeFinding, ProbeStatus } from "./probe-types.js";

/** What one probe's chat request came back with: the turn, or the failure that ended it. */
export interface ChatOutcome {
  turn?: Turn | undefined;
  error?: unknown;
}

/** What the probes saw, beside the records. */
export interface ProbeEvidence {
  parameters: ChatOutcome;
  tools: ChatOutcome;
  json: ChatOutcome;
  prefill: ChatOutcome;
  /** The server's words for each latch a refusal flipped, by latch name. */
  words: Partial<Record<string, string>>;
  /** The `owned_by` the listing gave, where it gave one. */
  owner?: string | undefined;
  /** The tool the tools probe declared. */
  toolName: string;
}

/** The HTTP status of a failure, where it has one. */
export function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null | undefined)?.status;
  return typeof status === "number" ? status : undefined;
}

/** Whether a failed request was the server refusing it (a 4xx that is not a rate limit, a timeout or an overflow). */
export function isRefusal(error: unknown): boolean {
  const status = statusOf(error);
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429 && !isOverflow(error);
}

function row(capability: ProbeCapability, label: string, status: ProbeStatus, detail: string, words?: string): ProbeFinding {
  return words ? { capability, label, status, detail, words } : { capability, label, status, detail };
}

/** A row for a latch still on after its request failed: never tried through to an answer. */
function untried(capability: ProbeCapability, label: string, outcome: ChatOutcome): ProbeFinding {
  return row(capability, label, "unknown", "the request failed after negotiation", wordsOf(outcome.error) || undefined);
}

function parameterRows(supports: EndpointCapabilities, model: ModelCapabilities, evidence: ProbeEvidence): ProbeFinding[] {
  const outcome = evidence.parameters;
  const { words } = evidence;
  const failed = outcome.error !== undefined;
  const usage = outcome.turn?.usage;
  const rows: ProbeFinding[] = [];
  if (!supports.usageInStream)
    rows.push(row("usageInStream", "usage in the stream", "refused", "stream_options refused; usage is estimated", words.usageInStream));
  else if (!usage) rows.push(untried("usageInStream", "usage in the stream", outcome));
  else if (usage.prompt > 0 || usage.total > 0)
    rows.push(
      row("usageInStream", "usage in the stream", "supported", `sent (${usage.prompt} prompt tokens${usage.cached > 0 ? `, ${usage.cached} cached` : ""})`),
    );
  else rows.push(row("usageInStream", "usage in the stream", "ignored", "stream_options accepted but no usage came"));
  rows.push(
    !model.legacyTokenLimit
      ? row("maxTokens", "max-tokens spelling", "refused", "max_tokens refused; sends max_completion_tokens", words.maxTokens)
      : failed
        ? untried("maxTokens", "max-tokens spelling", outcome)
        : row("maxTokens", "max-tokens spelling", "supported", "max_tokens"),
  );
  rows.push(
    !model.chosenTemperature
      ? row("temperature", "temperature", "refused", "only the model's own temperature", words.temperature)
      : failed
        ? untried("temperature", "temperature", outcome)
        : row("temperature", "temperature", "supported", "a chosen temperature (0) was taken"),
  );
  if (!model.reasoningEffort) {
    rows.push(row("reasoningEffort", "reasoning effort", "refused", "takes no reasoning_effort", words.reasoningEffort));
  } else if (failed) {
    rows.push(untried("reasoningEffort", "reasoning effort", outcome));
  } else {
    const took = effortFor(model, "none");
    const skipped = model.refusedEfforts.length > 0 ? `; refused ${model.refusedEfforts.join(", ")}` : "";
    const refusedWords = model.refusedEfforts.length > 0 ? words.reasoningEffort : undefined;
    const reasoned = outcome.turn?.reasoning ?? "";
    // Taking "none" and reasoning anyway is a field the server takes and does nothing with.
    if (took === "none" && reasoned.trim() !== "") {
      rows.push(
        row(
          "reasoningEffort",
          "reasoning effort",
          "ignored",
          `reasoning_effort none was taken, yet ${reasoned.length} characters of reasoning still came${skipped}`,
          refusedWords,
        ),
      );
    } else {
      rows.push(
        row(
          "reasoningEffort",
          "reasoning effort",
          "supported",
          `lowest rung taken: ${took}${skipped}${reasoned.trim() === "" ? "; no reasoning came" : ""}`,
          refusedWords,
        ),
      );
    }
  }
  return rows;
}

function toolRows(supports: EndpointCapabilities, evidence: ProbeEvidence): ProbeFinding[] {
  const outcome = evidence.tools;
  const { words } = evidence;
  const known = evidence.owner ? `the listing says owned_by "${evidence.owner}"` : "known from an earlier listing";
  const grammar = supports.grammarConstrained
    ? row(
        "grammar",
        "schemas held by a grammar",
        "supported",
        `${known}: tool arguments and json_schema answers are held to a grammar built from each schema, so relaxed schemas are sent`,
      )
    : row("grammar", "schemas held by a grammar", "unknown", "the listing names no server known to build a grammar from the schema");
  let strict: ProbeFinding;
  if (supports.grammarConstrained) {
    strict = row(
      "strictSchemas",
      "strict tool schemas",
      "ignored",
      "strict: true is taken and ignored by a grammar server; it is sent relaxed schemas, whose grammar holds lengths, patterns, item counts and an integer's minimum/maximum but no bound of a number",
    );
  } else if (!supports.strictSchemas) {
    strict = row("strictSchemas", "strict tool schemas", "refused", "sends relaxed schemas", words.strictSchemas);
  } else if (!outcome.turn) {
    strict = isRefusal(outcome.error)
      ? row("strictSchemas", "strict tool schemas", "unknown", "tools were refused")
      : row("strictSchemas", "strict tool schemas", "unknown", "the request with tools failed", wordsOf(outcome.error) || undefined);
  } else {
    strict = row("strictSchemas", "strict tool schemas", "supported", "strict: true was taken");
  }
  let calls: ProbeFinding;
  const turn = outcome.turn;
  if (!turn) {
    calls = isRefusal(outcome.error)
      ? row("toolCalls", "tool calls", "refused", "the request with tools was refused", wordsOf(outcome.error))
      : row("toolCalls", "tool calls", "unknown", "the request with tools failed", wordsOf(outcome.error) || undefined);
  } else if (turn.toolCalls.length > 0) {
    calls = row("toolCalls", "tool calls", "supported", "parsed by the server into tool_calls");
  } else if (recoverToolCalls(turn.content, [evidence.toolName]).calls.length > 0) {
    calls = row("toolCalls", "tool calls", "as text", "left in the reply as text; recoverToolCalls reads them");
  } else {
    calls = row(
      "toolCalls",
      "tool calls",
      "not called",
      turn.finishReason === "length" ? "the reply hit the 64-token ceiling before any call" : "the model answered without calling the tool",
    );
  }
  return [grammar, strict, calls];
}

function jsonRow(supports: EndpointCapabilities, model: ModelCapabilities, evidence: ProbeEvidence): ProbeFinding {
  const outcome = evidence.json;
  const label = "json_schema response_format";
  if (!model.structuredOutput) return row("jsonSchema", label, "refused", "answers are held to JSON by parsing instead", evidence.words.jsonSchema);
  // A refusal negotiate could not answer latches nothing, so it is not a "refused" the snapshot would carry.
  if (outcome.error !== undefined) {
    return row(
      "jsonSchema",
      label,
      "unknown",
      isRefusal(outcome.error) ? "refused, and not as something a run drops" : "the request failed",
      wordsOf(outcome.error) || undefined,
    );
  }
  return row("jsonSchema", label, "supported", supports.grammarConstrained ? "taken, the reply held to the relaxed schema by the grammar" : "taken");
}

function prefillRow(model: ModelCapabilities, evidence: ProbeEvidence): ProbeFinding {
  const outcome = evidence.prefill;
  if (!model.assistantPrefill) return row("prefill", "assistant prefill", "refused", "a cut-off answer is not continued", wordsOf(outcome.error) || undefined);
  if (outcome.error !== undefined) return row("prefill", "assistant prefill", "unknown", "the request failed", wordsOf(outcome.error) || undefined);
  return row("prefill", "assistant prefill", "supported", "a trailing assistant message was taken");
}

/**
 * Reads the probe's rows after the window's: each latch from the records as the probes left them,
 * so a latch a later probe flipped is the row's as well as the snapshot's.
 */
export function findingsFrom(supports: EndpointCapabilities, model: ModelCapabilities, evidence: ProbeEvidence): ProbeFinding[] {
  return [...parameterRows(supports, model, evidence), ...toolRows(supports, evidence), jsonRow(supports, model, evidence), prefillRow(model, evidence)];
}
