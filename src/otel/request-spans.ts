/**
 * @module otel/request-spans
 * A run's requests as `chat` spans: the step's first request, then a span of its own for each
 * re-send after a refusal, each retry and a continuation, all linked to the step's first, until
 * the step's usage event closes the last with the turn's tokens, finish reason and cache verdict.
 *
 * One negotiation may flip several latches before it sends again, each with its own notice said
 * in the same tick, so refusals are held until something else is heard and then acted on
 * together: the refused request ends where the first of them was said, and its re-send starts
 * there. A refusal heard in a later tick is the re-send's own, refused in its turn.
 */

import { SpanKind, SpanStatusCode, type Attributes, type AttributeValue, type Context, type Span, type SpanContext } from "@opentelemetry/api";
import type { TurnMetrics } from "../index.js";
import { REFUSED_ATTRIBUTE, turnAttributes } from "./attributes.js";
import { outputContent } from "./content.js";
import { AGENT_CORE_ATTRIBUTES as A, AGENT_CORE_EVENTS as E, ERROR_TYPE_REFUSED } from "./names.js";
import type { NoticeReading } from "./notices.js";
import type { RunMeters } from "./run-meters.js";
import type { SpanSettings } from "./tool-spans.js";
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_TOKEN_TYPE,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ERROR_TYPE_VALUE_OTHER,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_TOKEN_TYPE_VALUE_INPUT,
  GEN_AI_TOKEN_TYPE_VALUE_OUTPUT,
} from "./semconv.js";

/** What the request spans are made with. */
export interface RequestSettings extends SpanSettings {
  meters: RunMeters;
  /** Attributes every metric point carries: provider and server, nothing per run. */
  metricAttributes: Attributes;
  /** Request attributes for a request seen only through its events. */
  configRequest: Attributes;
}

/** Why a request went out. */
export type RequestKind = "first" | "resend" | "retry" | "continuation";

type Refusal = Extract<NoticeReading, { kind: "refusal" }>;
type Continuation = Extract<NoticeReading, { kind: "continuation" }>;

/** How an operation failed, for its span and its duration point. */
export interface Failure {
  errorType: string;
  message?: string | undefined;
}

/** A `chat` span still open, with what its step has said so far. */
export interface OpenRequest {
  span: Span;
  startedAt: number;
  attempt: number;
  /** The request's own attributes, carried onto its re-sends. */
  request: Attributes;
  text: string[];
  reasoning: string[];
  /** Refusals heard and not yet acted on. */
  refusals: Array<{ at: number; text: string; reading: Refusal }>;
  /** When the reply stopped at the ceiling, and how much it had streamed by then. */
  cut?: { at: number; text: number; reasoning: number } | undefined;
  /** The continuation's notice, where one came after the cut. */
  continuation?: { at: number; text: string; reading: Continuation } | undefined;
  /** Span events heard after the cut, for whichever span ends the step. */
  later: Array<{ name: string; attributes: Attributes; at: number }>;
}

/** The `chat` spans of one run. @internal */
export class RequestSpans {
  /** The request now in flight, where one is. */
  open: OpenRequest | undefined;
  /** The request that asked for the calls now being run. */
  lastChat: SpanContext | undefined;
  /** The step the next request belongs to. */
  step = 0;
  /** First requests opened so far. */
  requests = 0;
  /** The step's first request, which its re-sends, retries and continuation link to. */
  private firstOfStep: SpanContext | undefined;
  /** Where the current step began: the run's start, or the end of the step before and its calls. */
  private stepStartedAt: number;
  /** Set while the refusals of one negotiation's answer are being said, cleared once that tick is over. */
  private answering = false;

  constructor(
    private readonly settings: RequestSettings,
    private readonly parent: () => Context,
    startedAt: number,
  ) {
    this.stepStartedAt = startedAt;
  }

  /** Opens a request span; a first one starts a step's chain of links. */
  begin(kind: RequestKind, at: number, attempt: number, request: Attributes): OpenRequest {
    const model = request[ATTR_GEN_AI_REQUEST_MODEL];
    const span = this.settings.tracer.startSpan(
      typeof model === "string" ? `chat ${model}` : "chat",
      {
        kind: SpanKind.CLIENT,
        startTime: at,
        links: kind !== "first" && this.firstOfStep ? [{ context: this.firstOfStep }] : [],
        attributes: {
          ...this.settings.common,
          [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
          ...request,
          [A.turnIndex]: this.step,
          [A.requestKind]: kind,
          [A.requestAttempt]: attempt,
        },
      },
      this.parent(),
    );
    if (kind === "first") {
      this.firstOfStep = span.spanContext();
      this.requests += 1;
    }
    this.open = { span, startedAt: at, attempt, request, text: [], reasoning: [], refusals: [], later: [] };
    return this.open;
  }

  /** The open request, or one seen only through its events, taken to start where the step began. */
  current(at: number): OpenRequest {
    return this.settle() ?? this.begin("first", Math.min(this.stepStartedAt, at), 1, this.settings.configRequest);
  }

  /** Ends a request span and records its duration. */
  close(open: OpenRequest, at: number, failure?: Failure): void {
    if (failure) {
      open.span.setAttribute(ATTR_ERROR_TYPE, failure.errorType);
      open.span.setStatus({ code: SpanStatusCode.ERROR, ...(failure.message !== undefined ? { message: failure.message } : {}) });
    }
    open.span.end(at);
    if (this.open === open) this.open = undefined;
    this.settings.meters.duration.record(Math.max(0, at - open.startedAt) / 1000, {
      ...this.metricAttributes(open),
      ...(failure ? { [ATTR_ERROR_TYPE]: failure.errorType } : {}),
    });
  }

  /** Acts on the refusals held: the refused request ends, and its re-send opens, where the first was said. */
  settle(): OpenRequest | undefined {
    const open = this.open;
    if (!open || open.refusals.length === 0) return open;
    const first = open.refusals[0]!;
    const request: Attributes = { ...open.request };
    for (const refusal of open.refusals) {
      open.span.addEvent(E.refusal, refusalAttributes(refusal.reading, refusal.text), refusal.at);
      const dropped = REFUSED_ATTRIBUTE[refusal.reading.field];
      if (dropped !== undefined) delete request[dropped];
    }
    this.close(open, first.at, { errorType: ERROR_TYPE_REFUSED, message: first.text });
    return this.begin("resend", first.at, open.attempt + 1, request);
  }

  /** Holds a refusal for the open request; false where none is open to hold it. */
  refused(at: number, text: string, reading: Refusal): boolean {
    // A refusal after the tick its predecessors were said in was the re-send's: act on those first.
    const open = this.answering ? this.open : this.settle();
    if (!open || open.cut !== undefined) return false;
    open.refusals.push({ at, text, reading });
    if (!this.answering) {
      this.answering = true;
      queueMicrotask(() => {
        this.answering = false;
      });
    }
    return true;
  }

  /** Notes that the step's calls ran until now, so a request seen only through its events starts after them. */
  idleUntil(at: number): void {
    if (at > this.stepStartedAt) this.stepStartedAt = at;
  }

  /** Ends the open request as failed and opens its retry; false where none is open. */
  retry(at: number, text: string, reading: Extract<NoticeReading, { kind: "retry" }>): boolean {
    const open = this.settle();
    if (!open) return false;
    open.span.addEvent(E.retry, { [A.retryAttempt]: reading.attempt, [A.notice]: text }, at);
    this.close(open, at, { errorType: ERROR_TYPE_VALUE_OTHER, message: reading.failure });
    this.begin("retry", at, open.attempt + 1, open.request);
    return true;
  }

  /** Marks where the reply stopped at the ceiling. */
  cutOff(at: number): void {
    const open = this.settle();
    if (open) open.cut = { at, text: open.text.length, reasoning: open.reasoning.length };
  }

  /** Holds a continuation's notice for the step's usage event; false where no cut reply awaits one. */
  continued(at: number, text: string, reading: Continuation): boolean {
    const open = this.settle();
    if (!open || open.cut === undefined) return false;
    open.continuation = { at, text, reading };
    return true;
  }

  /** Adds a span event to the open request (after a cut, to whichever span ends the step); false where none is open. */
  event(name: string, attributes: Attributes, at: number): boolean {
    const open = this.settle();
    if (!open) return false;
    if (open.cut !== undefined) open.later.push({ name, attributes, at });
    else open.span.addEvent(name, attributes, at);
    return true;
  }

  /**
   * Closes the step with its usage event: the turn's tokens, finish reason, cache verdict,
   * context and timings on its last request, a continuation split off at the cut.
   */
  usage(turn: Partial<TurnMetrics>, at: number): void {
    const open = this.current(at);
    const capture = this.settings.captureContent;
    const attributes = turnAttributes(turn);
    let last = open;
    let failure: Failure | undefined;
    const continuation = open.cut !== undefined ? open.continuation : undefined;
    if (continuation !== undefined && open.cut !== undefined) {
      // The first request ends at the cut. A continuation that went on carries the joined turn;
      // one that failed left the turn as the first request's own.
      const continued = continuation.reading.outcome === "continued";
      const cut = open.cut;
      open.span.setAttributes(continued ? { [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: ["length"] } : attributes);
      if (capture) {
        const reply = { text: open.text.slice(0, cut.text).join(""), reasoning: open.reasoning.slice(0, cut.reasoning).join("") };
        open.span.setAttribute(ATTR_GEN_AI_OUTPUT_MESSAGES, outputContent({ ...reply, finishReason: "length" }));
      }
      this.close(open, cut.at);
      last = this.begin("continuation", cut.at, open.attempt + 1, open.request);
      last.text = open.text.slice(cut.text);
      last.reasoning = open.reasoning.slice(cut.reasoning);
      const requests = continuation.reading.requests;
      last.span.addEvent(
        E.continuation,
        {
          [A.continuationOutcome]: continuation.reading.outcome,
          ...(requests !== undefined ? { [A.continuationRequests]: requests } : {}),
          [A.notice]: continuation.text,
        },
        continuation.at,
      );
      if (requests !== undefined) last.span.setAttribute(A.continuationRequests, requests);
      if (continued) last.span.setAttributes(attributes);
      else failure = { errorType: continuation.reading.outcome === "refused" ? ERROR_TYPE_REFUSED : ERROR_TYPE_VALUE_OTHER, message: continuation.text };
    } else {
      open.span.setAttributes(attributes);
    }
    for (const later of open.later) last.span.addEvent(later.name, later.attributes, later.at);
    const points = this.metricAttributes(last);
    if (turn.cacheBroken === true) {
      const reason = typeof turn.cacheBreakReason === "string" ? turn.cacheBreakReason : "";
      last.span.addEvent(
        E.cacheBreak,
        {
          ...(reason !== "" ? { [A.cacheBreakReason]: reason } : {}),
          ...(typeof turn.cacheExpected === "number" ? { [A.cacheExpected]: turn.cacheExpected } : {}),
          ...(typeof turn.cached === "number" ? { [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: turn.cached } : {}),
        },
        at,
      );
      this.settings.meters.cacheBreaks.add(1, { ...points, ...(reason !== "" ? { [A.cacheBreakReason]: reason } : {}) });
    }
    if (capture) {
      const finishReason = typeof turn.finishReason === "string" ? turn.finishReason : "";
      last.span.setAttribute(ATTR_GEN_AI_OUTPUT_MESSAGES, outputContent({ text: last.text.join(""), reasoning: last.reasoning.join(""), finishReason }));
    }
    if (typeof turn.prompt === "number")
      this.settings.meters.tokens.record(turn.prompt, { ...points, [ATTR_GEN_AI_TOKEN_TYPE]: GEN_AI_TOKEN_TYPE_VALUE_INPUT });
    if (typeof turn.completion === "number")
      this.settings.meters.tokens.record(turn.completion, { ...points, [ATTR_GEN_AI_TOKEN_TYPE]: GEN_AI_TOKEN_TYPE_VALUE_OUTPUT });
    this.close(last, at, failure);
    this.lastChat = last.span.spanContext();
    this.stepStartedAt = at;
    this.step += 1;
  }

  /** The model the open request (or the config) names, for a metric point. */
  model(): string | undefined {
    const model = (this.open?.request ?? this.settings.configRequest)[ATTR_GEN_AI_REQUEST_MODEL];
    return typeof model === "string" ? model : undefined;
  }

  private metricAttributes(open: OpenRequest): Attributes {
    const model: AttributeValue | undefined = open.request[ATTR_GEN_AI_REQUEST_MODEL];
    return {
      ...this.settings.metricAttributes,
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
      ...(model !== undefined ? { [ATTR_GEN_AI_REQUEST_MODEL]: model } : {}),
    };
  }
}

/**
 * The attributes of a refusal's span event.
 *
 * @param reading - The refusal as its notice was read.
 * @param text - The notice.
 */
export function refusalAttributes(reading: Refusal, text: string): Attributes {
  return {
    [A.refusalField]: reading.field,
    [A.refusalScope]: reading.scope,
    ...(reading.model !== undefined ? { [A.refusalModel]: reading.model } : {}),
    [A.notice]: text,
  };
}
