/**
 * @module testing/refusal-rules-transcript
 * The refusals of a transcript's shape the loopback endpoint can be told to make: a system
 * message past the first, a tool-call turn without reasoning, a tool-call id of the wrong form,
 * a replayed call without its signature, a field the server does not know.
 */
import type { RefusalDetail, RefusalKind } from "./profile-types.js";
import { isPlainRecord } from "./guards.js";

/** The rules this module reads, as RefusalRules holds them. */
export interface ShapeRules {
  systemNotFirst?: boolean;
  reasoningOnToolCalls?: boolean;
  toolCallIdLength?: number;
  callField?: string;
  messageFieldsForbidden?: string[];
}

function pathValue(record: Record<string, unknown>, path: string): unknown {
  let value: unknown = record;
  for (const key of path.split(".")) value = isPlainRecord(value) ? value[key] : undefined;
  return value;
}

function callsOf(message: Record<string, unknown>): Record<string, unknown>[] {
  return Array.isArray(message.tool_calls) ? message.tool_calls.filter(isPlainRecord) : [];
}

/** Finds the first thing about a body's messages the rules refuse. @internal */
export function shapeRefusal(rules: ShapeRules, body: Record<string, unknown>): { kind: RefusalKind; detail: RefusalDetail } | undefined {
  const messages: unknown[] = Array.isArray(body.messages) ? body.messages : [];
  for (const [index, message] of messages.entries()) {
    if (!isPlainRecord(message)) continue;
    if (rules.systemNotFirst && index > 0 && message.role === "system") return { kind: "systemNotFirst", detail: { value: index } };
    for (const field of rules.messageFieldsForbidden ?? []) {
      if (field in message || callsOf(message).some((call) => field in call)) return { kind: "messageField", detail: { field, value: index } };
    }
    const calls = callsOf(message);
    if (message.role === "assistant" && calls.length > 0) {
      if (rules.reasoningOnToolCalls && typeof message.reasoning_content !== "string") return { kind: "toolCallReasoning", detail: { value: index } };
      if (rules.callField) {
        const missing = calls.find((call) => typeof pathValue(call, rules.callField as string) !== "string");
        const fn = isPlainRecord(missing?.function) ? missing.function : {};
        if (missing) return { kind: "callFieldMissing", detail: { value: index, name: String(fn.name ?? "") } };
      }
    }
    const length = rules.toolCallIdLength;
    if (typeof length === "number") {
      const valid = new RegExp(`^[A-Za-z0-9]{${length}}$`);
      const ids = [...calls.map((call) => call.id), message.role === "tool" ? message.tool_call_id : undefined].filter((id) => id !== undefined);
      const bad = ids.find((id) => typeof id !== "string" || !valid.test(id));
      if (bad !== undefined) return { kind: "toolCallId", detail: { value: String(bad) } };
    }
  }
  return undefined;
}
