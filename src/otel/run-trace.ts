/**
 * @module otel/run-trace
 * One run as spans: the `invoke_agent` span, with a `chat` span per request (request-spans) and
 * an `execute_tool` span per call (tool-spans) under it, driven by what the handler hears.
 *
 * The run span opens on the first thing heard, backdated to when the handler was made. Notices
 * are read back (notices) into span events, span splits and counters. However the run ends —
 * its `done` event, or {@link RunTrace.finish} for a run ended by hand — every span still open
 * ends with it, and nothing heard afterwards opens another.
 */

import { SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from "@opentelemetry/api";
import {
  LOAD_TOOLS_NAME,
  STOPPED_BEFORE_CALL,
  STOPPED_DURING_CALL,
  type RequestBody,
  type RunEventInput,
  type RunOutcome,
  type RunTotals,
  type ToolCallRequest,
} from "../index.js";
import { bodyAttributes, summaryIn } from "./attributes.js";
import { inputContent } from "./content.js";
import { AGENT_CORE_ATTRIBUTES as A, AGENT_CORE_EVENTS as E, ERROR_TYPE_STOPPED } from "./names.js";
import { readNotice } from "./notices.js";
import { RequestSpans, refusalAttributes, type RequestSettings } from "./request-spans.js";
import { closeTool, openTool, type OpenTool } from "./tool-spans.js";
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ERROR_TYPE_VALUE_OTHER,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
} from "./semconv.js";

/** Everything a run's trace is made with, defaults already applied. */
export interface TraceSettings extends RequestSettings {
  /** The context the run span is a child of. */
  parent: Context;
  /** When the run span starts: when the handler was made. */
  startedAt: number;
  /** The run span's name. */
  runName: string;
  /** Attributes the run span is given beside the common ones. */
  runAttributes: Attributes;
}

const isStop = (content: string): boolean => content === STOPPED_DURING_CALL || content === STOPPED_BEFORE_CALL;

/** One run's spans and metric points. @internal */
export class RunTrace {
  private run: Span | undefined;
  private runContext: Context;
  private finished = false;
  private readonly requests: RequestSpans;
  private lastSummary: string | undefined;
  private turns = 0;
  private toolCalls = 0;
  private totals: RunTotals | undefined;
  private failure: string | undefined;
  private readonly tools = new Map<string, OpenTool>();
  /** The step's calls by name and arguments, to tell a deduplicated one. */
  private readonly stepCalls = new Map<string, string>();
  /** What onToolCall made of each call's own argument text, until its event arrives. */
  private readonly readings = new Map<string, "repaired" | "unreadable">();

  constructor(private readonly settings: TraceSettings) {
    this.runContext = settings.parent;
    this.requests = new RequestSpans(settings, () => this.runContext, settings.startedAt);
  }

  /** The context of a call's `execute_tool` span while it runs, for work of its own to nest under. */
  toolContext(id: string): Context | undefined {
    const open = this.tools.get(id);
    return open ? trace.setSpan(this.runContext, open.span) : undefined;
  }

  /** Hears one run event. */
  event(event: RunEventInput): void {
    if (this.finished || event === null || typeof event !== "object") return;
    if (event.kind === "output" || event.kind === "thinking") {
      // Streamed text only matters where content is recorded; this is the hot path.
      if (!this.settings.captureContent || !this.startRun()) return;
      const open = this.requests.current(this.settings.now());
      (event.kind === "output" ? open.text : open.reasoning).push(String(event.text ?? ""));
      return;
    }
    if (!this.startRun()) return;
    if (event.kind === "notice") return this.notice(String(event.text ?? ""));
    this.requests.settle();
    switch (event.kind) {
      case "usage": {
        this.requests.usage(event.turn !== null && typeof event.turn === "object" ? event.turn : {}, this.settings.now());
        this.turns += 1;
        if (event.totals !== null && typeof event.totals === "object") this.totals = event.totals;
        this.stepCalls.clear();
        return;
      }
      case "tool-call":
        return this.toolCall(String(event.id ?? ""), String(event.name ?? ""), String(event.args ?? ""));
      case "tool-result":
        return this.toolResult(String(event.id ?? ""), String(event.name ?? ""), event.ok === true, String(event.content ?? ""), event.durationMs);
      case "error":
        this.failure = String(event.message ?? "");
        return;
      case "done":
        return this.finish(event.outcome ?? (this.failure !== undefined ? "failed" : "answered"));
      case "invalid-arguments":
      case "approval-requested":
      case "approval-decided":
      case "resumed":
        // Not part of the trace's spans: the tool result and the usage carry what they change.
        return;
      default:
        // A new kind fails to compile here until it is decided; one unknown at run time is skipped.
        event satisfies never;
        return;
    }
  }

  /** Hears a step's request as first built: the start of its first `chat` span. */
  request(body: RequestBody, step: number): void {
    if (this.finished || body === null || typeof body !== "object" || !this.startRun()) return;
    const at = this.settings.now();
    const previous = this.requests.settle();
    if (previous) this.requests.close(previous, at);
    const summary = summaryIn(body.messages);
    if (this.requests.requests > 0 && summary !== undefined && summary !== this.lastSummary) this.run!.addEvent(E.compaction, {}, at);
    this.lastSummary = summary;
    if (Number.isInteger(step)) this.requests.step = step;
    const open = this.requests.begin("first", at, 1, bodyAttributes(body));
    if (this.settings.captureContent && Array.isArray(body.messages)) {
      const content = inputContent(body.messages);
      open.span.setAttribute(ATTR_GEN_AI_INPUT_MESSAGES, content.messages);
      if (content.system !== undefined) open.span.setAttribute(ATTR_GEN_AI_SYSTEM_INSTRUCTIONS, content.system);
    }
  }

  /** Hears a call as dispatch will be handed it: its own argument text tells a repaired or unreadable one. */
  call(request: ToolCallRequest): void {
    if (this.finished || request === null || typeof request !== "object" || typeof request.id !== "string") return;
    const raw = request.raw;
    if (typeof raw !== "string" || raw.trim() === "") return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      parsed = undefined;
    }
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return;
    const args = request.args;
    this.readings.set(request.id, args !== null && typeof args === "object" && Object.keys(args).length > 0 ? "repaired" : "unreadable");
  }

  /** Ends every span still open; the outcome decides the status of what it cut short. */
  finish(outcome: RunOutcome | "unfinished"): void {
    if (this.finished) return;
    const at = this.settings.now();
    const errorType = outcome === "stopped" ? ERROR_TYPE_STOPPED : outcome === "failed" ? ERROR_TYPE_VALUE_OTHER : undefined;
    const open = this.requests.settle();
    if (open) this.requests.close(open, at, errorType !== undefined ? { errorType, message: this.failure } : undefined);
    for (const tool of this.tools.values()) closeTool(this.settings, tool, { ok: false, content: "", at, errorType: errorType ?? ERROR_TYPE_VALUE_OTHER });
    this.tools.clear();
    this.readings.clear();
    this.stepCalls.clear();
    this.finished = true;
    const run = this.run;
    if (!run) return;
    run.setAttributes({ [A.runOutcome]: outcome, [A.runTurns]: this.turns, [A.runToolCalls]: this.toolCalls });
    if (this.totals) {
      run.setAttributes({
        [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: this.totals.prompt,
        [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: this.totals.completion,
        [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: this.totals.cached,
      });
    }
    if (errorType !== undefined) {
      run.setAttribute(ATTR_ERROR_TYPE, errorType);
      run.setStatus({ code: SpanStatusCode.ERROR, ...(this.failure !== undefined ? { message: this.failure } : {}) });
    }
    run.end(at);
    const model = this.settings.runAttributes[ATTR_GEN_AI_REQUEST_MODEL];
    this.settings.meters.duration.record(Math.max(0, at - this.settings.startedAt) / 1000, {
      ...this.settings.metricAttributes,
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
      ...(model !== undefined ? { [ATTR_GEN_AI_REQUEST_MODEL]: model } : {}),
      ...(errorType !== undefined ? { [ATTR_ERROR_TYPE]: errorType } : {}),
    });
  }

  /** Opens the run span on the first thing heard, backdated to when the handler was made. */
  private startRun(): boolean {
    if (this.finished) return false;
    if (this.run) return true;
    const { tracer, parent, startedAt, runName, common, runAttributes } = this.settings;
    this.run = tracer.startSpan(
      runName,
      {
        kind: SpanKind.INTERNAL,
        startTime: startedAt,
        attributes: { ...common, [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT, ...runAttributes },
      },
      parent,
    );
    this.runContext = trace.setSpan(parent, this.run);
    return true;
  }

  private notice(text: string): void {
    const reading = readNotice(text);
    const at = this.settings.now();
    const requests = this.requests;
    switch (reading.kind) {
      case "refusal":
        this.countRefusal(reading.field, reading.scope, reading.model);
        if (!requests.refused(at, text, reading)) this.run!.addEvent(E.refusal, refusalAttributes(reading, text), at);
        return;
      case "retry":
        if (!requests.retry(at, text, reading)) this.run!.addEvent(E.retry, { [A.retryAttempt]: reading.attempt, [A.notice]: text }, at);
        return;
      case "cut-off":
        this.requestEvent(E.cutOff, { [A.notice]: text }, at);
        requests.cutOff(at);
        return;
      case "continuation":
        if (reading.latched) this.countRefusal("assistant_prefill", "model", requests.model());
        if (!requests.continued(at, text, reading)) this.run!.addEvent(E.continuation, { [A.continuationOutcome]: reading.outcome, [A.notice]: text }, at);
        return;
      case "loading":
        return this.requestEvent(E.modelLoading, { [A.notice]: text }, at);
      case "recovered":
        return this.requestEvent(E.toolCallsRecovered, { [A.recoveredCalls]: reading.count, [A.notice]: text }, at);
      case "preselection":
        requests.settle();
        this.run!.addEvent(E.preselection, { [A.preselectionTools]: reading.tools, [A.notice]: text }, at);
        return;
      default:
        return this.requestEvent(E.notice, { [A.notice]: text }, at);
    }
  }

  private toolCall(id: string, name: string, args: string): void {
    const at = this.settings.now();
    // load_tools is answered by the loop itself, so a repeat of one is not a shared answer.
    const key = `${name}\u0000${args}`;
    const original = name === LOAD_TOOLS_NAME ? undefined : this.stepCalls.get(key);
    if (original === undefined) this.stepCalls.set(key, id);
    const already = this.tools.get(id);
    if (already) closeTool(this.settings, already, { ok: false, content: "", at, errorType: ERROR_TYPE_VALUE_OTHER });
    const reading = this.readings.get(id);
    this.readings.delete(id);
    const link = this.requests.lastChat;
    this.tools.set(
      id,
      openTool(this.settings, this.runContext, {
        id,
        name,
        args,
        at,
        ...(link ? { link } : {}),
        ...(original !== undefined ? { original } : {}),
        ...(reading ? { reading } : {}),
      }),
    );
    this.toolCalls += 1;
  }

  private toolResult(id: string, name: string, ok: boolean, content: string, durationMs: number | undefined): void {
    const at = this.settings.now();
    this.requests.idleUntil(at);
    const open = this.tools.get(id);
    if (!open) {
      // A call the run stopped before reaching is answered without ever being announced.
      this.run!.addEvent(E.toolCallNotRun, { [ATTR_GEN_AI_TOOL_NAME]: name, [ATTR_GEN_AI_TOOL_CALL_ID]: id }, at);
      return;
    }
    this.tools.delete(id);
    closeTool(this.settings, open, {
      ok,
      content,
      at,
      ...(typeof durationMs === "number" ? { durationMs } : {}),
      ...(ok ? {} : { errorType: isStop(content) ? ERROR_TYPE_STOPPED : ERROR_TYPE_VALUE_OTHER }),
    });
  }

  /** A span event for the open request, or for the run where none is open. */
  private requestEvent(name: string, attributes: Attributes, at: number): void {
    if (!this.requests.event(name, attributes, at)) this.run!.addEvent(name, attributes, at);
  }

  private countRefusal(field: string, scope: string, model: string | undefined): void {
    this.settings.meters.refusals.add(1, {
      ...this.settings.metricAttributes,
      [A.refusalField]: field,
      [A.refusalScope]: scope,
      ...(model !== undefined ? { [ATTR_GEN_AI_REQUEST_MODEL]: model } : {}),
    });
  }
}
