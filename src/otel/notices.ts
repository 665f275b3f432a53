/**
 * @module otel/notices
 * Reads a run's notice sentences back into what they report: a refusal learned, a retry, a wait
 * for a loading model, a reply cut off and how its continuation went, calls recovered from text,
 * a preselection.
 *
 * Notices are sentences for a person; the loop emits nothing more structured for these, so this
 * is the one place that knows their wording. Every pattern is exercised by a real run in the
 * otel tests, so a wording that moves fails there rather than going quiet here.
 */

import { PRESELECTED_NOTICE } from "../index.js";

/** What a notice reports, as far as the trace cares. */
export type NoticeReading =
  | { kind: "refusal"; field: string; scope: "endpoint" | "model"; model?: string }
  | { kind: "retry"; attempt: number; failure: string }
  | { kind: "loading" }
  | { kind: "cut-off" }
  | { kind: "continuation"; outcome: "continued" | "started_over" | "refused" | "failed"; requests?: number; latched: boolean }
  | { kind: "recovered"; count: number }
  | { kind: "preselection"; tools: string[] }
  | { kind: "other" };

type Reader = (text: string) => NoticeReading | undefined;

const match =
  (pattern: RegExp, read: (groups: RegExpExecArray) => NoticeReading): Reader =>
  (text) => {
    const found = pattern.exec(text);
    return found ? read(found) : undefined;
  };

const READERS: readonly Reader[] = Object.freeze([
  match(/^The endpoint refused stream_options;/, () => ({ kind: "refusal", field: "stream_options", scope: "endpoint" })),
  match(/^The endpoint could not take strict tool schemas;/, () => ({ kind: "refusal", field: "strict", scope: "endpoint" })),
  match(/^Model (.+) does not take reasoning effort "[^"]*"; asking for /, (found) => ({
    kind: "refusal",
    field: "reasoning_effort",
    scope: "model",
    model: found[1]!,
  })),
  match(/^Model (.+) takes no reasoning effort; sending none from now on\.$/, (found) => ({
    kind: "refusal",
    field: "reasoning_effort",
    scope: "model",
    model: found[1]!,
  })),
  match(/^Model (.+) refused (max_tokens|max_completion_tokens); sending the reply ceiling as /, (found) => ({
    kind: "refusal",
    field: found[2]!,
    scope: "model",
    model: found[1]!,
  })),
  match(/^Model (.+) does not let the temperature be chosen;/, (found) => ({ kind: "refusal", field: "temperature", scope: "model", model: found[1]! })),
  match(/^Model (.+) refused response_format; asking for JSON in words/, (found) => ({
    kind: "refusal",
    field: "response_format",
    scope: "model",
    model: found[1]!,
  })),
  match(/^The endpoint refused "(.+)" for model (.+); sending the request without /, (found) => ({
    kind: "refusal",
    field: found[1]!,
    scope: "model",
    model: found[2]!,
  })),
  match(/^The request failed \((.*)\); retry (\d+) of \d+ in /, (found) => ({ kind: "retry", attempt: Number(found[2]), failure: found[1]! })),
  match(/^The endpoint is still loading .+; waiting up to /, () => ({ kind: "loading" })),
  match(/^The reply was cut off at the (?:.+-token|server's own token) ceiling/, () => ({ kind: "cut-off" })),
  match(/^Continued the cut-off answer by prefilling it \((\d+) more requests?\)/, (found) => ({
    kind: "continuation",
    outcome: "continued",
    requests: Number(found[1]),
    latched: false,
  })),
  match(/^Model .+ started the answer over instead of continuing it;/, () => ({ kind: "continuation", outcome: "started_over", latched: true })),
  match(/^Model .+ refused to continue a cut-off answer/, () => ({ kind: "continuation", outcome: "refused", latched: true })),
  match(/^Continuing the cut-off answer failed/, () => ({ kind: "continuation", outcome: "failed", latched: false })),
  match(/^The model wrote (\d+) tool calls? as text/, (found) => ({ kind: "recovered", count: Number(found[1]) })),
]);

/**
 * Reads one notice sentence into what it reports; anything it does not know is `other`.
 *
 * @param text - The notice as the run emitted it.
 */
export function readNotice(text: string): NoticeReading {
  if (typeof text !== "string") return { kind: "other" };
  if (text.startsWith(PRESELECTED_NOTICE)) {
    const tools = text
      .slice(PRESELECTED_NOTICE.length)
      .split(",")
      .map((name) => name.trim())
      .filter((name) => name !== "");
    return { kind: "preselection", tools };
  }
  for (const reader of READERS) {
    const reading = reader(text);
    if (reading) return reading;
  }
  return { kind: "other" };
}
