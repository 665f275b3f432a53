/**
 * @module @cubicecho/agent-core
 * The endpoint-agnostic half of an OpenAI-compatible agent loop. This file is the table of
 * contents: explicit named re-exports, grouped by module.
 */

// config
export { FinishReason } from "./config.js";
export type {
  Endpoint,
  ModelParams,
  ToolPolicy,
  RetryPolicy,
  WindowPolicy,
  ReasoningEffort,
  Message,
  SystemMessage,
  UserMessage,
  AssistantMessage,
  ToolMessage,
  ToolCall,
  TextPart,
  ImagePart,
  ContentPart,
  JsonSchema,
  ToolDefinition,
  Turn,
  TurnUsage,
  TurnTimings,
  ResolvedTask,
} from "./config.js";

// catalog
export type { CatalogServer, CatalogTool } from "./catalog.js";

// tokens
export { estimateTokens, messageChars, messageTokens, toolTokens, requestTokens, DEFAULT_CHARS_PER_TOKEN, IMAGE_PART_TOKENS } from "./tokens.js";
export { contextTokens, contextChars } from "./tokens.js";
export type { TokenOptions, RequestLike, ContextBreakdown, ContextTokenOptions } from "./tokens.js";

// retry
export { isTransient, isModelLoading, isOverflow, backoffMs, ContextOverflow, EndpointSilent } from "./retry.js";
export type { BackoffOptions, ContextOverflowOptions, EndpointSilentOptions, OverflowSource, SilencePhase } from "./retry.js";

// schema-compat
export { sanitizeTools, relaxTools, isGrammarError, sanitizeSchema, relaxSchema, omitOptionalNulls } from "./schema-compat.js";

// thinking
export { FenceSplitter, stripThinking, DEFAULT_FENCES, ALL_FENCES } from "./thinking.js";
export type { Fence, FenceSplitterOptions, SplitResult } from "./thinking.js";

// tool-calls
export { parseToolArguments, recoverToolCalls, ToolArgumentsError } from "./tool-calls.js";
export type {
  ToolArgumentsErrorKind,
  ParseToolArgumentsOptions,
  RecoverToolCallsOptions,
  RecoveredToolCalls,
  ToolCallRequest,
  ToolCallResult,
  ToolCallOutcome,
} from "./tool-calls.js";

// errors
export { errorMessage, AgentLoopError, ToolIterationLimit, AgentLoopOverflow, failedRun } from "./errors.js";
export type { FailedRun } from "./errors.js";

// client
export { getClient, timeoutMs, firstTokenMs, resolveApiKey, NO_KEY, listModels, servedWindow, contextLimitFor } from "./client.js";
export type { ListedModel, WindowLookupOptions } from "./client.js";

// stream
export { streamTurn, StreamInterrupted, MalformedStreamEvent } from "./stream.js";
export type { Produced, StreamBody, StreamTurnOptions } from "./stream.js";

// capabilities
export { EFFORT_LADDER, capabilitiesFor, modelCapabilitiesFor, negotiate, effortFor, NegotiationError } from "./capabilities.js";
export type { EndpointCapabilities, ModelCapabilities, NegotiateOptions, NegotiateSend } from "./capabilities.js";

// request-body
export { buildBody, orderTools } from "./request-body.js";
export type { ToolOrder, RequestBody } from "./request-body.js";

// calibration
export { calibrate, charsPerTokenFor } from "./calibration.js";
export type { CalibrateOptions, CalibrationTarget } from "./calibration.js";

// continuation
export { continueTurn, isContinuable } from "./continuation.js";
export type { ContinueTurnOptions } from "./continuation.js";

// snapshot
export { exportCapabilities, importCapabilities, CAPABILITIES_SNAPSHOT_VERSION } from "./snapshot.js";
export type { CapabilitiesSnapshot, EndpointSnapshot, ModelSnapshot, ImportCapabilitiesResult } from "./snapshot.js";

// run-turn
export { runTurn } from "./run-turn.js";
export type { RunTurnOptions, BuildRequest } from "./run-turn.js";

// side-task
export { ask, askReply, askJson, parseJson, summariser, taskCall } from "./side-task.js";
export type {
  SideTaskInput,
  SideTaskOptions,
  AskJsonOptions,
  SideTaskReply,
  SideTaskSchema,
  SummariserOptions,
  SideTaskSummariser,
  TaskCall,
  TaskCallOptions,
} from "./side-task.js";

// preselect
export {
  preselect,
  preselectByKeywords,
  preselectSystem,
  preselectInput,
  preselection,
  PRESELECT_SCHEMA,
  PRESELECTED_NOTICE,
  KEYWORD_MIN_SCORE,
  KEYWORD_DROPOFF,
} from "./preselect.js";
export type {
  PreselectOptions,
  PreselectAsk,
  PreselectAskOptions,
  KeywordOptions,
  KeywordThresholds,
  KeywordPreselection,
  KeywordScore,
} from "./preselect.js";

// compaction
export {
  pruneToolResults,
  planCompaction,
  runCompaction,
  compactTranscript,
  applyCompaction,
  requestIndex,
  SUMMARY_LEAD,
  summaryMessage,
  summaryOf,
  clearedResult,
  CompactionMismatch,
} from "./compaction.js";
export type {
  PruneOptions,
  PlanOptions,
  CompactionPlan,
  MessageEstimate,
  Summariser,
  CompactionHooks,
  CompactionOptions,
  CompactionFold,
  BeforeCompactPayload,
} from "./compaction.js";

// ledger
export { recordRequest, tokensBetween, estimateFrom, rebaseLedger, LedgerMismatch } from "./ledger.js";
export type { LedgerEntry, LedgerRequest, ReportedRequest, LedgerOptions } from "./ledger.js";

// hooks
export {
  HOOK_CONTEXT_TOKENS,
  HOOK_PREFACE,
  HOOK_EVENTS,
  gather,
  notify,
  consult,
  assembleContext,
  configureHooks,
  resetHooks,
  withContext,
  UNTRUSTED_PREFACE,
  untrusted,
  turnMessages,
  turnIndex,
} from "./hooks.js";
export type {
  HookEventName,
  HookOutcome,
  HookRunner,
  HookSettings,
  GatherOptions,
  Gathered,
  NotifyOptions,
  Consulted,
  AssembledContext,
  InjectedContext,
  HookMessage,
  UntrustedOptions,
} from "./hooks.js";

// events
export { emit, watch, history, fold, endRun, configureEvents, resetEvents, runMetrics } from "./events.js";
export type {
  RunEvent,
  RunEventInput,
  RunEventKind,
  RunOutcome,
  RunTotals,
  TurnMetrics,
  CacheBreakReason,
  RunMetrics,
  RunMetricsOptions,
  EventSettings,
  ReplayOptions,
} from "./events.js";

// tool-loading
export {
  PROXY_TOOLS,
  LOAD_TOOLS,
  CALL_TOOL,
  LOAD_TOOLS_NAME,
  CALL_TOOL_NAME,
  LOAD_CAP,
  CARRY_CAP,
  describeCatalog,
  catalogNames,
  catalogFromTools,
  expandNames,
  carryOver,
  loadResult,
  proxyLoadResult,
  proxiedCall,
  definedTools,
  holdsDefinitions,
  formatDefinitionLine,
  parseDefinitionLine,
} from "./tool-loading.js";
export type { LoadResolution, ProxiedCall, DefinitionLine } from "./tool-loading.js";

// run-calls
export {
  readCalls,
  runCalls,
  preview,
  readToolResult,
  STOPPED_DURING_CALL,
  STOPPED_BEFORE_CALL,
  PREVIEW_CHARS,
  MAX_RESULT_CHARS,
} from "./run-calls.js";
export type { Dispatch, ReadCall, ReadCallsOptions, CallRoute, RunCallsOptions, CallsRun } from "./run-calls.js";

// agent-loop
export { runAgentLoop } from "./agent-loop.js";
export type {
  AgentLoopOptions,
  AgentLoopConfig,
  AgentLoopResult,
  AgentLoopMetrics,
  AgentLoopHooks,
  AgentLoopSideTasks,
  StepBudget,
  PreselectRequest,
  PreselectTools,
} from "./agent-loop.js";

// runtime
export { createRuntime, defaultRuntime } from "./runtime.js";
export type { Runtime } from "./runtime.js";

// reset
export { resetAll } from "./reset.js";
