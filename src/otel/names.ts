/**
 * @module otel/names
 * The names the otel entry writes for what only this library knows: its own attributes, span
 * events and metrics, all under `agent_core.`, none shadowing a published convention.
 */

/** The attributes the otel entry adds beside the GenAI conventions, by what they hold. */
export const AGENT_CORE_ATTRIBUTES = Object.freeze({
  /** How the run ended: `answered`, `failed`, `stopped`, or `unfinished` where it was ended by hand. */
  runOutcome: "agent_core.run.outcome",
  /** The turns (usage events) the run had. */
  runTurns: "agent_core.run.turns",
  /** The tool calls the run made. */
  runToolCalls: "agent_core.run.tool_calls",
  /** The run's tool discovery mode (`eager`, `ondemand`, `proxy`), from the config. */
  toolDiscovery: "agent_core.tool_discovery",
  /** The step a request belongs to, from 0. */
  turnIndex: "agent_core.turn.index",
  /** Why the request went out: `first`, `resend` (a refusal answered), `retry` or `continuation`. */
  requestKind: "agent_core.request.kind",
  /** The request's place among its step's requests, from 1. */
  requestAttempt: "agent_core.request.attempt",
  /** The reasoning effort the request asked for. */
  requestReasoningEffort: "agent_core.request.reasoning_effort",
  /** How many tools the request declared. */
  requestToolsDeclared: "agent_core.request.tools_declared",
  /** The estimated size of the declared tool block, in tokens. */
  requestToolSchemaTokens: "agent_core.request.tool_schema_tokens",
  /** Whether the request carries a compaction summary. */
  requestSummarised: "agent_core.request.summarised",
  /** The prompt a warm cache should have held: the previous prompt plus its reply. */
  cacheExpected: "agent_core.cache.expected",
  /** Whether the cache hit fell short of 90% of the previous prompt. */
  cacheBroken: "agent_core.cache.broken",
  /** Why the cache broke: `tools-changed`, `system-changed`, `history-rewritten` or `none-known`. */
  cacheBreakReason: "agent_core.cache.break_reason",
  /** The system prompt's share of the prompt, in tokens. */
  contextSystem: "agent_core.context.system",
  /** The tool block's share of the prompt, in tokens. */
  contextTools: "agent_core.context.tools",
  /** The history's share of the prompt, in tokens. */
  contextHistory: "agent_core.context.history",
  /** The tool results' share of the prompt, in tokens. */
  contextToolResults: "agent_core.context.tool_results",
  /** llama.cpp's prefill time, in milliseconds. */
  llamaPrefillMs: "agent_core.llama.prefill_ms",
  /** llama.cpp's decode time, in milliseconds. */
  llamaDecodeMs: "agent_core.llama.decode_ms",
  /** Prompt tokens llama.cpp evaluated (not from its cache). */
  llamaPromptTokens: "agent_core.llama.prompt_tokens",
  /** Tokens llama.cpp generated. */
  llamaPredictedTokens: "agent_core.llama.predicted_tokens",
  /** Prompt tokens llama.cpp reused from the slot's cache. */
  llamaCachedPromptTokens: "agent_core.llama.cached_prompt_tokens",
  /** Draft tokens speculative decoding proposed. */
  llamaDraftTokens: "agent_core.llama.draft_tokens",
  /** Draft tokens speculative decoding had accepted. */
  llamaDraftAcceptedTokens: "agent_core.llama.draft_accepted_tokens",
  /** The extra requests a continuation spent, where its notice said. */
  continuationRequests: "agent_core.continuation.requests",
  /** How a continuation went: `continued`, `started_over`, `refused` or `failed`. */
  continuationOutcome: "agent_core.continuation.outcome",
  /** Whether a tool call shared the answer of an identical call made earlier in its step. */
  toolDeduplicated: "agent_core.tool.deduplicated",
  /** The call whose answer a deduplicated call shared. */
  toolOriginalCallId: "agent_core.tool.original_call_id",
  /** The request field (or feature) a refusal named. */
  refusalField: "agent_core.refusal.field",
  /** What the refusal was latched for: `endpoint` or `model`. */
  refusalScope: "agent_core.refusal.scope",
  /** The model a model-level refusal was latched for. */
  refusalModel: "agent_core.refusal.model",
  /** The retry's number within its step. */
  retryAttempt: "agent_core.retry.attempt",
  /** The tools a preselection chose. */
  preselectionTools: "agent_core.preselection.tools",
  /** How many tool calls were recovered from the reply's text. */
  recoveredCalls: "agent_core.tool_calls.count",
  /** The notice a span event was read from, as the run said it. */
  notice: "agent_core.notice.text",
});

/** The span events the otel entry records, by what they mark. */
export const AGENT_CORE_EVENTS = Object.freeze({
  /** The endpoint refused a field; the request was sent again without it (on the refused request). */
  refusal: "agent_core.refusal",
  /** A transient failure; the request is retried (on the failed request). */
  retry: "agent_core.retry",
  /** The server was still loading the model; the request waits for it. */
  modelLoading: "agent_core.model_loading",
  /** The reply stopped at the token ceiling. */
  cutOff: "agent_core.cut_off",
  /** A cut-off reply was continued, or the continuation failed (on the continuation). */
  continuation: "agent_core.continuation",
  /** The prompt cache broke, with its reason (on the request that found it). */
  cacheBreak: "agent_core.cache_break",
  /** Tool calls written as text were recovered from the reply (on its request). */
  toolCallsRecovered: "agent_core.tool_calls.recovered",
  /** A call's arguments did not parse as written and were repaired (on the call). */
  toolCallRepaired: "agent_core.tool_call.repaired",
  /** A call's arguments could not be read at all; it was answered with the reason (on the call). */
  toolCallUnreadable: "agent_core.tool_call.unreadable",
  /** A call shared the answer of an identical one made earlier in its step (on the call). */
  toolCallDeduplicated: "agent_core.tool_call.deduplicated",
  /** A call the run stopped before reaching (on the run). */
  toolCallNotRun: "agent_core.tool_call.not_run",
  /** The run opened with a shortlist of tools (on the run). */
  preselection: "agent_core.preselection",
  /** The transcript was folded into a summary before a request (on the run). */
  compaction: "agent_core.compaction",
  /** Any other notice the run said (on the open request, else the run). */
  notice: "agent_core.notice",
});

/** The metrics the otel entry records beside the GenAI conventions' two histograms. */
export const AGENT_CORE_METRICS = Object.freeze({
  /** A counter of refusals learned (latches flipped), by field and scope. */
  refusals: "agent_core.refusals",
  /** A counter of prompt-cache breaks, by reason. */
  cacheBreaks: "agent_core.cache.breaks",
});

/** The `error.type` for an operation the run's stop cut short. */
export const ERROR_TYPE_STOPPED = "stopped";

/** The `error.type` for a request the endpoint refused and the run sent again without the refused field. */
export const ERROR_TYPE_REFUSED = "refused";
