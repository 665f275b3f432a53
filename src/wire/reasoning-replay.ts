/**
 * @module wire/reasoning-replay
 * How the scratchpad behind a tool call is sent back to the model that wrote it: under which
 * field, on which assistant turns, and beside or folded into the turn's text; learned per model
 * from the words of a refusal, and applied to the messages of every request body.
 *
 * The loop stores a tool-call turn's reasoning as `reasoning_content` on its assistant message.
 * DeepSeek in thinking mode reads that field and refuses a request that lacks it; its V4 models
 * want it on every assistant turn while tools are declared. vLLM's gpt-oss path reads only
 * `reasoning` (learned from its model listing, not from a refusal: it ignores a field it does
 * not know). Groq refuses `reasoning_content` on an input message and takes `reasoning`, and a
 * model that reasons not at all refuses that too. llama.cpp's gpt-oss template fails on a
 * tool-call message carrying both text and reasoning.
 */

import type { Answer } from "./refusal-answer.js";
import type { Message } from "../shapes/config.js";
import { isPlainRecord } from "../text/guards.js";

/** The message field a scratchpad is sent back under, or `"none"` for not at all. */
export type ReplayField = "reasoning_content" | "reasoning" | "none";

/** Every value a {@link ReplayField} may take, in the order a refusal steps through them. */
export const REPLAY_FIELDS: readonly ReplayField[] = Object.freeze(["reasoning_content", "reasoning", "none"]);

/** A model's replay latches, as its capability record holds them. */
export interface ReplayLatches {
  /** The field a refusal taught; "" where nothing was learned, so the endpoint's default applies. */
  replayField?: ReplayField | "" | undefined;
  /** Every assistant turn carries the field while tools are declared (DeepSeek V4); "" stands in where a turn has none. */
  replayEveryTurn?: boolean | undefined;
  /** A tool-call turn with both text and reasoning has its text moved into the reasoning (llama.cpp's gpt-oss template). */
  replayFoldContent?: boolean | undefined;
}

/** The form the messages of one request are sent in. */
export interface ReplayForm {
  /** The field the scratchpad goes under, or "none". */
  field: ReplayField;
  /** Whether every assistant turn carries the field while tools are declared. */
  everyTurn: boolean;
  /** Whether a tool-call turn's text is folded into its reasoning. */
  foldContent: boolean;
}

/** What the words of a failure say about replayed reasoning. */
export type ReplayRefusal = { kind: "pass-back" } | { kind: "field"; field: "reasoning_content" | "reasoning" } | { kind: "both" } | undefined;

/**
 * A thinking mode asking for the scratchpad back: DeepSeek's "The `reasoning_content` in the
 * thinking mode must be passed back to the API." (V4) and "Missing `reasoning_content` field in
 * the assistant message at message index 2" (deepseek-reasoner), and Kimi K2's "thinking is
 * enabled but reasoning_content is missing in assistant tool call message at index 2".
 */
const PASS_BACK =
  /reasoning_content`?\s+in\s+the\s+thinking\s+mode\s+must\s+be\s+passed\s+back|missing\s+`?reasoning_content`?\s+field|thinking\s+is\s+enabled\s+but\s+`?reasoning_content`?\s+is\s+missing/i;

/**
 * A message field refused on an input message: Groq's "property 'reasoning_content' is
 * unsupported" and "messages[1].reasoning: reasoning is not supported with this model", or a
 * pydantic `extra_forbidden` whose location runs through `messages`.
 */
const FIELD_REFUSALS: readonly RegExp[] = [
  /property\s+['"`]?(reasoning_content|reasoning)['"`]?\s+is\s+(?:unsupported|not supported|not allowed)/i,
  /messages[.[]\s*\d+\]?\.(reasoning_content|reasoning)\s*:\s*[^.]*?(?:is\s+not\s+supported|unsupported|extra inputs are not permitted)/i,
  /messages['"`]?\s*,\s*\d+\s*,\s*(?:['"`]\w+['"`]\s*,\s*)*['"`](reasoning_content|reasoning)['"`]\s*[\])][^.]*?extra inputs are not permitted/i,
];

/** llama.cpp's gpt-oss template refusing a tool-call message with both text and thinking. */
const BOTH = /cannot\s+pass\s+both\s+content\s+and\s+thinking/i;

/** Reads what a failure's words say about replayed reasoning; undefined where they say nothing of it. */
export function readReplayRefusal(message: string): ReplayRefusal {
  if (typeof message !== "string" || message === "") return undefined;
  if (PASS_BACK.test(message)) return { kind: "pass-back" };
  if (BOTH.test(message)) return { kind: "both" };
  for (const pattern of FIELD_REFUSALS) {
    const match = pattern.exec(message);
    if (match?.[1]) return { kind: "field", field: match[1].toLowerCase() as "reasoning_content" | "reasoning" };
  }
  return undefined;
}

function isReplayField(value: unknown): value is ReplayField {
  return typeof value === "string" && (REPLAY_FIELDS as readonly string[]).includes(value);
}

/**
 * Returns the form a request's messages are sent in: the field a refusal taught the model, else
 * the endpoint's (`reasoning` on a vLLM listing), else `reasoning_content`; every turn and
 * folding only where a refusal asked for them.
 *
 * @param model - The model's record; absent means nothing learned.
 * @param endpointField - The endpoint record's `reasoningField`, where its listing set one.
 */
export function replayFormOf(model: ReplayLatches | undefined, endpointField?: unknown): ReplayForm {
  const learned = model?.replayField;
  const field = isReplayField(learned) ? learned : isReplayField(endpointField) ? endpointField : "reasoning_content";
  return { field, everyTurn: model?.replayEveryTurn === true, foldContent: model?.replayFoldContent === true };
}

function scratchpadOf(message: Record<string, unknown>): string | undefined {
  if (typeof message.reasoning_content === "string") return message.reasoning_content;
  if (typeof message.reasoning === "string") return message.reasoning;
  return undefined;
}

function rewrite(message: Record<string, unknown>, form: ReplayForm, toolsSent: boolean): Record<string, unknown> {
  let text = scratchpadOf(message);
  const copy: Record<string, unknown> = { ...message };
  delete copy.reasoning_content;
  delete copy.reasoning;
  if (form.field === "none") return copy;
  const calls = Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
  if (form.foldContent && calls && text !== undefined && text.trim() !== "" && typeof message.content === "string" && message.content.trim() !== "") {
    text = `${text}\n\n${message.content}`;
    copy.content = "";
  }
  if (text === undefined && form.everyTurn && toolsSent) text = "";
  if (text !== undefined) copy[form.field] = text;
  return copy;
}

function sameMessage(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => key in b && a[key] === b[key]);
}

/**
 * Returns the messages with every assistant turn's scratchpad in the given form; the input is
 * not changed, and a message the form leaves as it was is passed on as the same object.
 *
 * The scratchpad is read from `reasoning_content`, or `reasoning` where the first is absent, and
 * written under `form.field` alone (both removed for "none"). With `everyTurn`, while tools are
 * declared, an assistant turn without one gets the field as "". With `foldContent`, a tool-call
 * turn with both reasoning and text sends the text after the reasoning, and an empty content.
 *
 * @param messages - The messages of a request.
 * @param form - The form, from {@link replayFormOf}.
 * @param toolsSent - Whether the request declares tools.
 */
export function applyReplayForm(messages: readonly Message[], form: ReplayForm, toolsSent: boolean): Message[] {
  const list = Array.isArray(messages) ? messages : [];
  return list.map((message) => {
    if (!isPlainRecord(message) || message.role !== "assistant") return message;
    const next = rewrite(message, form, toolsSent);
    return sameMessage(message, next) ? message : (next as unknown as Message);
  });
}

/** Whether any assistant message of a sent body carries the field. */
function bodyCarries(sent: Record<string, unknown> | undefined, field: string): boolean | undefined {
  if (sent === undefined) return undefined;
  const messages = sent.messages;
  if (!Array.isArray(messages)) return false;
  return messages.some((message) => isPlainRecord(message) && message.role === "assistant" && field in message);
}

/** What a replay refusal comes to: an answer, a clear stop, or nothing to do with replay. */
export type ReplayDecision = { kind: "answer"; answer: Answer } | { kind: "stuck"; message: string; refused: string } | undefined;

/**
 * Decides the latch that answers a refusal of replayed reasoning, or undefined where the words
 * are not about it.
 *
 * - DeepSeek asking for `reasoning_content` back: the field is set to `reasoning_content` and
 *   carried on every assistant turn while tools are declared (as "" where a turn has none).
 * - A refused `reasoning_content`: sent as `reasoning` from now on; a refused `reasoning`: sent
 *   not at all. A refusal of a field the request did not carry is a stop, not a latch.
 * - llama.cpp's both-content-and-thinking failure: a tool-call turn's text is folded into its
 *   reasoning.
 *
 * @param message - The failure's words.
 * @param model - The model's record, latched by the answer.
 * @param endpointField - The endpoint's `reasoningField`, where its listing set one.
 * @param name - The model's name, for the notice.
 * @param sent - The body the refused request carried, where known.
 */
export function decideReplayRefusal(
  message: string,
  model: ReplayLatches,
  endpointField: unknown,
  name: string,
  sent: Record<string, unknown> | undefined,
): ReplayDecision {
  const reading = readReplayRefusal(message);
  if (reading === undefined) return undefined;
  const form = replayFormOf(model, endpointField);
  if (reading.kind === "pass-back") {
    return {
      kind: "answer",
      answer: {
        what: "reasoning_content passed back",
        latch: "replay:pass-back",
        already: form.field === "reasoning_content" && form.everyTurn,
        apply: () => {
          model.replayField = "reasoning_content";
          model.replayEveryTurn = true;
        },
        notice: `Model ${name} wants its reasoning sent back as reasoning_content; every assistant turn carries it while tools are declared from now on (empty where a turn kept none).`,
      },
    };
  }
  if (reading.kind === "both") {
    return {
      kind: "answer",
      answer: {
        what: "content beside reasoning on a tool call",
        latch: "replay:fold",
        already: form.foldContent || form.field === "none",
        apply: () => {
          model.replayFoldContent = true;
        },
        notice: `Model ${name} cannot take text beside reasoning on a tool-call turn; the text is sent after the reasoning instead from now on.`,
      },
    };
  }
  const refused = reading.field;
  if (bodyCarries(sent, refused) === false) {
    return { kind: "stuck", refused, message: `The endpoint refused ${refused} on a message for model ${name}, which the request did not send.` };
  }
  const next: ReplayField = refused === "reasoning_content" ? "reasoning" : "none";
  return {
    kind: "answer",
    answer: {
      what: `${refused} on a message`,
      latch: `replay:field:${refused}`,
      already: form.field !== refused,
      apply: () => {
        model.replayField = next;
      },
      notice:
        next === "none"
          ? `Model ${name} refused reasoning sent back on its messages; sending none from now on.`
          : `Model ${name} refused reasoning_content on its messages; sending the reasoning as reasoning instead from now on.`,
    },
  };
}

/** A model's replay latches as a snapshot stores them: only what a refusal taught. */
export interface ReplaySnapshot {
  /** The field a refusal taught. */
  replayField?: ReplayField | undefined;
  /** True where every assistant turn carries the field while tools are declared. */
  replayEveryTurn?: boolean | undefined;
  /** True where a tool-call turn's text is folded into its reasoning. */
  replayFoldContent?: boolean | undefined;
}

/** The names a model snapshot may hold the replay latches under. */
export const REPLAY_SNAPSHOT_KEYS: readonly string[] = Object.freeze(["replayField", "replayEveryTurn", "replayFoldContent"]);

/** Writes the replay latches that differ from a fresh record. @internal */
export function replaySnapshotOf(record: ReplayLatches): ReplaySnapshot {
  const out: ReplaySnapshot = {};
  if (isReplayField(record.replayField)) out.replayField = record.replayField;
  if (record.replayEveryTurn === true) out.replayEveryTurn = true;
  if (record.replayFoldContent === true) out.replayFoldContent = true;
  return out;
}

/** Applies stored replay latches to a record, noting in `ignored` each value it does not understand. @internal */
export function importReplay(record: ReplayLatches, stored: Record<string, unknown>, where: string, ignored: string[]): void {
  const field = stored.replayField;
  if (field !== undefined) {
    if (isReplayField(field)) record.replayField = field;
    else ignored.push(`${where}.replayField: not one of ${REPLAY_FIELDS.join(", ")}`);
  }
  for (const flag of ["replayEveryTurn", "replayFoldContent"] as const) {
    const value = stored[flag];
    if (value === undefined) continue;
    if (typeof value !== "boolean") ignored.push(`${where}.${flag}: not a boolean`);
    else if (value) record[flag] = true;
  }
}
