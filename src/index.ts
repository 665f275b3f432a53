/**
 * @module @cubicecho/agent-core
 * The endpoint-agnostic half of an OpenAI-compatible agent loop. This file is the table of
 * contents: explicit named re-exports, grouped by module.
 */

// config
export { FinishReason } from "./shapes/config.js";
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
  FieldsOrigin,
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
} from "./shapes/config.js";

// catalog
export type { CatalogServer, CatalogTool } from "./shapes/catalog.js";

// tokens
export { estimateTokens, messageChars, messageTokens, toolTokens, requestTokens, DEFAULT_CHARS_PER_TOKEN, IMAGE_PART_TOKENS } from "./text/tokens.js";
export { contextTokens, contextChars } from "./text/tokens.js";
export type { TokenOptions, RequestLike, ContextBreakdown, ContextTokenOptions } from "./text/tokens.js";

// retry
export { isTransient, isModelLoading, isOverflow, backoffMs } from "./text/retry.js";
export type { BackoffOptions } from "./text/retry.js";
export { ContextOverflow } from "./text/context-overflow.js";
export type { ContextOverflowOptions, OverflowSource } from "./text/context-overflow.js";
export { EndpointSilent } from "./text/endpoint-silent.js";
export type { EndpointSilentOptions, SilencePhase } from "./text/endpoint-silent.js";

// schema-compat
export { sanitizeTools, relaxTools, isGrammarError, sanitizeSchema, relaxSchema, omitOptionalNulls } from "./text/schema-compat.js";
export type { SanitizeToolsOptions } from "./text/schema-compat.js";

// thinking
export { FenceSplitter, stripThinking, DEFAULT_FENCES, ALL_FENCES } from "./text/thinking.js";
export type { Fence, FenceSplitterOptions, SplitResult } from "./text/thinking.js";

// tool-calls
export { parseToolArguments, recoverToolCalls, ToolArgumentsError } from "./text/tool-calls.js";
export type {
  ToolArgumentsErrorKind,
  ParseToolArgumentsOptions,
  RecoverToolCallsOptions,
  RecoveredToolCalls,
  ToolCallRequest,
  ToolCallResult,
  ToolCallOutcome,
  ToolArgumentsErrorOptions,
} from "./text/tool-calls.js";

// errors
export { errorMessage, AgentLoopError, ToolIterationLimit, AgentLoopOverflow, failedRun, AgentCoreError } from "./text/errors.js";
export type { FailedRun, AgentCoreErrorOptions, AgentLoopErrorOptions, ToolIterationLimitOptions, AgentLoopOverflowOptions } from "./text/errors.js";

// client
export { getClient, timeoutMs, firstTokenMs, resolveApiKey, NO_KEY, listModels, servedWindow, contextLimitFor } from "./wire/client.js";
export type { ListedModel, WindowLookupOptions } from "./wire/client.js";

// stream
export { streamTurn, StreamInterrupted, MalformedStreamEvent, StreamErrorEvent, UnexpectedReply } from "./wire/stream.js";
export type { Produced, StreamBody, StreamTurnOptions, StreamInterruptedOptions, MalformedStreamEventOptions, UnexpectedReplyOptions } from "./wire/stream.js";

// capabilities
export { EFFORT_LADDER, capabilitiesFor, modelCapabilitiesFor, effortFor } from "./wire/capabilities.js";
export type { EndpointCapabilities, ModelCapabilities } from "./wire/capabilities.js";
export { negotiate, NegotiationError } from "./wire/negotiate.js";
export type { NegotiateOptions, NegotiateSend, NegotiationErrorOptions } from "./wire/negotiate.js";
export type { ReplayField } from "./wire/capabilities.js";

// request-body
export { buildBody, orderTools } from "./wire/request-body.js";
export type { ToolOrder, RequestBody, BuildBodyOptions } from "./wire/request-body.js";
export { applyCombinations } from "./wire/refusal-combination.js";
export type { CombinationLatches } from "./wire/refusal-combination.js";
export { TOOLS_IN_PROMPT_LEAD } from "./wire/message-shaping.js";

// calibration
export { calibrate, charsPerTokenFor } from "./wire/calibration.js";
export type { CalibrateOptions, CalibrationTarget } from "./wire/calibration.js";

// continuation
export { continueTurn, isContinuable } from "./wire/continuation.js";
export type { ContinueTurnOptions } from "./wire/continuation.js";

// snapshot
export { exportCapabilities, importCapabilities, CAPABILITIES_SNAPSHOT_VERSION } from "./wire/snapshot.js";
export type { CapabilitiesSnapshot, EndpointSnapshot, ModelSnapshot, ImportCapabilitiesResult } from "./wire/snapshot.js";
export { configureKeySalt } from "./wire/key-fingerprint.js";
export { configureCapabilities, CAPABILITY_BOUNDS_DEFAULTS } from "./wire/capability-bounds.js";
export type { CapabilityBounds } from "./wire/capability-bounds.js";

// run-turn
export { runTurn } from "./turn/run-turn.js";
export type { RunTurnOptions, BuildRequest, PromptCount } from "./turn/run-turn.js";

// side-task
export { ask, askReply, askJson, parseJson, summariser, taskCall } from "./turn/side-task.js";
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
} from "./turn/side-task.js";

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
  KEYWORD_MEMORY_MIN_SCORE,
  KEYWORD_MEMORY_DROPOFF,
} from "./run/preselect.js";
export type {
  PreselectOptions,
  PreselectAsk,
  PreselectAskOptions,
  KeywordOptions,
  KeywordThresholds,
  KeywordPreselection,
  KeywordScore,
} from "./run/preselect.js";

// usage memory
export { createUsageMemory, recordUsage, USAGE_MEMORY_MAX_REQUESTS } from "./run/usage-memory.js";
export type { UsageMemory, UsageMemoryOptions, RememberedRequest } from "./run/usage-memory.js";
export { exportUsageMemory, importUsageMemory, USAGE_MEMORY_SNAPSHOT_VERSION } from "./run/usage-memory-snapshot.js";
export type { UsageMemorySnapshot, UsageMemorySnapshotRequest, ImportUsageMemoryResult } from "./run/usage-memory-snapshot.js";

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
} from "./run/compaction.js";
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
  CompactionMismatchOptions,
} from "./run/compaction.js";

// ledger
export { recordRequest, tokensBetween, estimateFrom, rebaseLedger, LedgerMismatch } from "./run/ledger.js";
export type { LedgerEntry, LedgerRequest, ReportedRequest, LedgerOptions, LedgerMismatchOptions } from "./run/ledger.js";

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
} from "./run/hooks.js";
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
} from "./run/hooks.js";

// events
export { emit, watch, history, fold, endRun, configureEvents, resetEvents, runMetrics } from "./run/events.js";
export type {
  RunEvent,
  RunEventInput,
  OutputEvent,
  ThinkingEvent,
  ToolCallEvent,
  ToolResultEvent,
  UsageEvent,
  NoticeEvent,
  RunErrorEvent,
  DoneEvent,
  InvalidArgumentsEvent,
  ApprovalRequestedEvent,
  ApprovalDecidedEvent,
  ResumedEvent,
  RunEventKind,
  RunOutcome,
  RunTotals,
  TurnMetrics,
  CacheBreakReason,
  RunMetrics,
  RunMetricsOptions,
  EventSettings,
  ReplayOptions,
} from "./run/events.js";

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
} from "./run/tool-loading.js";
export type { LoadResolution, ProxiedCall, DefinitionLine } from "./run/tool-loading.js";

// run-calls
export { readCalls, runCalls, preview, readToolResult, STOPPED_DURING_CALL, STOPPED_BEFORE_CALL, PREVIEW_CHARS, MAX_RESULT_CHARS } from "./run/run-calls.js";
export type { Dispatch, ReadCall, ReadCallsOptions, CallRoute, RunCallsOptions, CallsRun, CallCheck, OpenCall } from "./run/run-calls.js";

// agent-loop
export { runAgentLoop, resumeAgentLoop } from "./run/agent-loop.js";
export type {
  AgentLoopOptions,
  ResumeAgentLoopOptions,
  AgentLoopConfig,
  AgentLoopResult,
  AgentLoopStatus,
  AgentLoopMetrics,
  AgentLoopHooks,
  AgentLoopSideTasks,
  StepBudget,
  PreselectRequest,
  PreselectTools,
} from "./run/agent-loop.js";

// define-tool
export { defineTool, toolset, ToolNotFound, TOOL_NAME_PATTERN } from "./run/define-tool.js";
export type {
  DefinedTool,
  ToolSpec,
  ToolParameters,
  ToolArguments,
  ToolContext,
  ToolExecute,
  Toolset,
  ToolsetEntry,
  ToolsetOptions,
  ToolNotFoundOptions,
} from "./run/define-tool.js";

// approval
export { DENIED_CALL, ApprovalDecisionError } from "./run/approval.js";
export type { ApprovalVerdict, ApprovePolicy, ApprovalDecision, ApprovalDecisions, ApprovalDecisionErrorOptions } from "./run/approval.js";

// run-state
export { serializeRunState, parseRunState, RUN_STATE_VERSION, RunStateError } from "./run/run-state.js";
export type { RunState, RunStateProblem, RunStateErrorOptions, SentRequestPrint, LedgerRequestPrint } from "./run/run-state.js";

// argument-validation
export { markArgumentsChecked, argumentsChecked, MAX_ARGUMENT_ISSUES } from "./run/argument-validation.js";
export type { OwnArgumentCheck } from "./run/argument-validation.js";

// runtime
export { createRuntime, defaultRuntime } from "./runtime.js";
export type { Runtime, RuntimeOptions, RuntimeBackend, RunFollower, SharedLatches } from "./runtime.js";

// reset
export { resetAll } from "./reset.js";
