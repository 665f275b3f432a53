/**
 * @module wire/refusal-combination
 * Reads a refusal of one field beside another ("Function tools with reasoning_effort are not
 * supported", "'parallel_tool_calls' is only allowed when 'tools' are specified") and answers it
 * with a latch on that combination, so the field is left out only of requests in that company.
 *
 * Two companies are told apart, the only two servers are seen to refuse by: a request that
 * declares tools and one that declares none. A model that refuses `reasoning_effort` beside
 * tools still takes it in a tool-free side task, and a `parallel_tool_calls` refused without
 * tools is still sent beside them. {@link applyCombinations} is what a body builder calls last.
 */

import type { Answer, Decision } from "./refusal-answer.js";
import { isPlainRecord } from "../text/guards.js";

/** The latches a model record holds for fields refused only in one company. */
export interface CombinationLatches {
  /** Top-level fields this model refused beside tools; a request that declares tools leaves them out. */
  droppedWithTools: string[];
  /** Top-level fields this model refused without tools; a request that declares none leaves them out. */
  droppedWithoutTools: string[];
  /**
   * The reasoning effort sent beside tools where the model said it takes no other there ("none"),
   * or "" where nothing replaces the effort beside tools.
   */
  effortWithTools: string;
}

/** What to do about a combination refusal: pass it on, or flip a latch and re-send. */
export type CombinationDecision = Exclude<Decision, { kind: "stuck" }>;

/** A refusal read as one of a field beside (or without) another. */
export interface CombinationReading {
  /** The top-level field refused. */
  field: string;
  /** The company it was refused in: beside tools, or without them. */
  company: "withTools" | "withoutTools";
  /** The effort the words offer for that company ("none"), where they name one. */
  offered?: string | undefined;
}

/** Fields the request owns, which no combination latch ever leaves out. */
const OWNED: ReadonlySet<string> = new Set(["model", "messages", "stream", "tools"]);

/** OpenAI's refusal of an effort beside function tools on chat completions, both wordings. */
const EFFORT_WITH_TOOLS = /function tools with reasoning[_ ]effort (?:are|is) not supported/i;

/** The way out the newer wording offers: "set reasoning_effort to 'none'". */
const EFFORT_OFFERED = /set reasoning[_ ]effort to ['"`]?(none|minimal|low|medium|high)\b/i;

/** OpenAI's "'parallel_tool_calls' is only allowed when 'tools' are specified". */
const ONLY_WITH_TOOLS =
  /['"`]?([A-Za-z_][\w]*)['"`]?\s+(?:is|are)\s+only\s+(?:allowed|permitted|supported|valid)\s+when\s+['"`]?tools['"`]?\s+(?:are|is)\s+(?:specified|provided|given|present|set)/i;

/** Reads a refusal's words as one of a field in one company; undefined for any other refusal. */
export function readCombination(message: string): CombinationReading | undefined {
  if (typeof message !== "string" || message === "") return undefined;
  if (EFFORT_WITH_TOOLS.test(message)) {
    const offered = EFFORT_OFFERED.exec(message)?.[1]?.toLowerCase();
    return { field: "reasoning_effort", company: "withTools", ...(offered ? { offered } : {}) };
  }
  const only = ONLY_WITH_TOOLS.exec(message);
  const field = only?.[1] ?? undefined;
  if (field && field !== "tools") return { field, company: "withoutTools" };
  return undefined;
}

/** Whether a body declares tools: a non-empty `tools` array. */
export function declaresTools(body: unknown): boolean {
  return isPlainRecord(body) && Array.isArray(body.tools) && body.tools.length > 0;
}

/** A model record read as its combination latches, whichever of them it carries. */
function latchesOf(model: unknown): Partial<CombinationLatches> {
  return isPlainRecord(model) ? (model as Partial<CombinationLatches>) : {};
}

type CombinationList = "droppedWithTools" | "droppedWithoutTools";

/** Whether a record's list already holds the field; an absent list holds nothing. */
function listed(model: Partial<CombinationLatches>, key: CombinationList, field: string): boolean {
  const list = model[key];
  return Array.isArray(list) && list.includes(field);
}

/** Adds the field to a record's list, making the list where the record has none. */
function addTo(model: Partial<CombinationLatches>, key: CombinationList, field: string): void {
  const list = Array.isArray(model[key]) ? model[key] : (model[key] = []);
  if (!list.includes(field)) list.push(field);
}

/**
 * Leaves out of a built body what the model refused in its company, and sends the effort it
 * takes beside tools where it named one; changes the body in place and returns it.
 *
 * A body that declares tools loses `droppedWithTools` and, where `effortWithTools` is set, sends
 * that effort in place of any other; one that declares none loses `droppedWithoutTools`.
 * `model`, `messages`, `stream` and `tools` are never removed. An absent record changes nothing.
 *
 * @param body - The body as built from the other latches.
 * @param model - The model's record, as negotiate hands it.
 */
export function applyCombinations<T extends Record<string, unknown>>(body: T, model: Partial<CombinationLatches> | undefined): T {
  if (!isPlainRecord(model) || !isPlainRecord(body)) return body;
  const record: Record<string, unknown> = body;
  const withTools = declaresTools(body);
  const dropped = withTools ? model.droppedWithTools : model.droppedWithoutTools;
  for (const field of Array.isArray(dropped) ? dropped : []) if (typeof field === "string" && !OWNED.has(field)) delete record[field];
  if (withTools && typeof model.effortWithTools === "string" && model.effortWithTools !== "") record.reasoning_effort = model.effortWithTools;
  return body;
}

/**
 * Decides the answer to a refusal of a field in one company, where the words read as one:
 * `undefined` hands the refusal on to the ordinary rules, a Decision is final.
 *
 * The effort beside tools is answered by leaving it out of tool-carrying requests, or, where the
 * words offer an effort instead ("set reasoning_effort to 'none'"), by sending that one beside
 * tools; a request that already sent the offered effort, or (in the older wording) sent none,
 * passes. A field refused without tools is left out of tool-free requests, but only where the
 * caller marked it droppable; otherwise the refusal passes. A refusal whose request was not in
 * the company its words name is not read as a combination. Without a model record nothing is
 * latched and the refusal passes.
 */
export function decideCombination(
  message: string,
  model: object | undefined,
  name: string,
  droppable: readonly string[],
  sent: Record<string, unknown> | undefined,
): CombinationDecision | undefined {
  const combination = readCombination(message);
  if (!combination) return undefined;
  const withTools = sent === undefined ? undefined : declaresTools(sent);
  if (combination.company === "withTools" && withTools === false) return undefined;
  if (combination.company === "withoutTools" && withTools === true) return undefined;
  if (!model) return { kind: "pass" };
  const latches = latchesOf(model);
  const answer =
    combination.company === "withTools" ? effortBesideTools(combination, latches, name, sent) : withoutTools(combination, latches, name, droppable);
  return answer ? { kind: "answer", answers: [answer] } : { kind: "pass" };
}

function effortBesideTools(
  combination: CombinationReading,
  model: Partial<CombinationLatches>,
  name: string,
  sent: Record<string, unknown> | undefined,
): Answer | undefined {
  const sentEffort = typeof sent?.reasoning_effort === "string" ? sent.reasoning_effort.toLowerCase() : undefined;
  const offered = combination.offered;
  if (offered !== undefined) {
    // The newer wording: such a model reasons by default beside tools, so leaving the effort out
    // is refused as well, and only the effort its words offer turns the reasoning off.
    if (sentEffort === offered) return undefined;
    return {
      what: `reasoning_effort other than ${offered} beside tools`,
      latch: `withTools:effort:${offered}`,
      already: model.effortWithTools === offered,
      apply: () => {
        model.effortWithTools = offered;
      },
      notice: `Model ${name} takes function tools here only at reasoning effort "${offered}"; requests that declare tools send "${offered}" from now on, which may reason less than asked, and tool-free ones keep the asked effort.`,
    };
  }
  if (sent !== undefined && sentEffort === undefined) return undefined;
  return {
    what: "reasoning_effort beside tools",
    latch: "withTools:reasoning_effort",
    already: listed(model, "droppedWithTools", "reasoning_effort"),
    field: "reasoning_effort",
    apply: () => addTo(model, "droppedWithTools", "reasoning_effort"),
    notice: `Model ${name} does not take a reasoning effort beside tools here; requests that declare tools go without it from now on, at the model's own effort, and tool-free ones still send it.`,
  };
}

function withoutTools(combination: CombinationReading, model: Partial<CombinationLatches>, name: string, droppable: readonly string[]): Answer | undefined {
  const field = combination.field;
  if (!droppable.includes(field)) return undefined;
  return {
    what: `${field} without tools`,
    latch: `withoutTools:${field}`,
    already: listed(model, "droppedWithoutTools", field),
    field,
    apply: () => addTo(model, "droppedWithoutTools", field),
    notice: `Model ${name} takes "${field}" only beside tools; requests that declare none go without it from now on, and ones that declare tools still send it.`,
  };
}
