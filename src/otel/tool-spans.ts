/**
 * @module otel/tool-spans
 * One tool call as an `execute_tool` span: opened at its tool-call event, linked to the request
 * that asked for it, and closed at its tool-result event with what the loop did about it — run,
 * repaired, unreadable, deduplicated, failed or stopped.
 */

import { SpanKind, SpanStatusCode, type Attributes, type Context, type Span, type SpanContext, type Tracer } from "@opentelemetry/api";
import { AGENT_CORE_ATTRIBUTES as A, AGENT_CORE_EVENTS as E } from "./names.js";
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ERROR_TYPE_VALUE_OTHER,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
} from "./semconv.js";

/** What the tool spans are made with. */
export interface SpanSettings {
  tracer: Tracer;
  /** The clock, in epoch milliseconds. */
  now: () => number;
  /** Whether arguments, results and messages are recorded. */
  captureContent: boolean;
  /** Attributes every span carries: provider, server, conversation. */
  common: Attributes;
}

/** An `execute_tool` span still open. */
export interface OpenTool {
  span: Span;
  /** The call whose answer this one may share: an identical call made earlier in its step. */
  original?: string | undefined;
}

/** A call as its tool-call event announced it, with what is known about it. */
export interface ToolStart {
  id: string;
  name: string;
  /** The arguments as the event previewed them. */
  args: string;
  at: number;
  /** The request that asked for the call. */
  link?: SpanContext | undefined;
  /** An identical call made earlier in the step. */
  original?: string | undefined;
  /** What the call's own argument text said, where it did not parse as written. */
  reading?: "repaired" | "unreadable" | undefined;
}

/** How a call ended. */
export interface ToolEnd {
  ok: boolean;
  /** What the model was handed, as the event previewed it. */
  content: string;
  at: number;
  /** The dispatch's own time; absent where nothing was dispatched (answered by the loop, or shared). */
  durationMs?: number | undefined;
  /** The `error.type` of a failed call. */
  errorType?: string | undefined;
}

/**
 * Opens a call's `execute_tool` span under the run.
 *
 * @param settings - The tracer, the clock, content capture and the common attributes.
 * @param parent - The run's context.
 * @param start - The call as announced.
 */
export function openTool(settings: SpanSettings, parent: Context, start: ToolStart): OpenTool {
  const attributes: Attributes = {
    ...settings.common,
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
    [ATTR_GEN_AI_TOOL_NAME]: start.name,
    [ATTR_GEN_AI_TOOL_CALL_ID]: start.id,
    [ATTR_GEN_AI_TOOL_TYPE]: "function",
  };
  if (settings.captureContent) attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS] = start.args;
  const span = settings.tracer.startSpan(
    start.name !== "" ? `execute_tool ${start.name}` : "execute_tool",
    { kind: SpanKind.INTERNAL, startTime: start.at, attributes, links: start.link ? [{ context: start.link }] : [] },
    parent,
  );
  if (start.reading === "repaired") span.addEvent(E.toolCallRepaired, {}, start.at);
  if (start.reading === "unreadable") span.addEvent(E.toolCallUnreadable, {}, start.at);
  return start.original !== undefined ? { span, original: start.original } : { span };
}

/**
 * Closes a call's span: a shared answer is marked deduplicated, a failure gets its error type.
 *
 * A call the loop answered without dispatching carries no duration, so an identical earlier call
 * plus no duration is what a shared answer looks like from the events.
 *
 * @param settings - Content capture decides whether the result is recorded.
 * @param open - The call's open span.
 * @param end - How it ended.
 */
export function closeTool(settings: SpanSettings, open: OpenTool, end: ToolEnd): void {
  const { span } = open;
  if (open.original !== undefined && end.durationMs === undefined) {
    span.setAttribute(A.toolDeduplicated, true);
    span.setAttribute(A.toolOriginalCallId, open.original);
    span.addEvent(E.toolCallDeduplicated, { [A.toolOriginalCallId]: open.original }, end.at);
  }
  if (settings.captureContent && end.content !== "") span.setAttribute(ATTR_GEN_AI_TOOL_CALL_RESULT, end.content);
  if (!end.ok) {
    span.setAttribute(ATTR_ERROR_TYPE, end.errorType ?? ERROR_TYPE_VALUE_OTHER);
    // The failure's words are what the model was handed, so they are content too.
    span.setStatus({ code: SpanStatusCode.ERROR, ...(settings.captureContent && end.content !== "" ? { message: end.content } : {}) });
  }
  span.end(end.at);
}
