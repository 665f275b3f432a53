/**
 * @module wire/refusal
 * Decides which latch, if any, answers a failed chat request ({@link decideRefusal}, negotiate's
 * classifier): the refusal as wire/refusal-reading read it, passed first to the readers of
 * combinations, message shaping, reasoning replay and provider fields, then answered field by
 * field: strict schemas, `stream_options`, the effort ladder, the reply ceiling's name, the
 * temperature, structured output and droppable fields. A failure no latch can answer passes on.
 */

import { isModelLoading, isOverflow } from "../text/retry.js";
import { isGrammarError } from "../text/schema-compat.js";
import { leafField, readRefusal, topLevelField, type RefusalReading } from "./refusal-reading.js";
import { decideCombination } from "./refusal-combination.js";
import type { Answer, Decision } from "./refusal-answer.js";
import { decideReplayRefusal, type ReplayLatches } from "./reasoning-replay.js";
import { decideShapingRefusal, type ShapingLatches } from "./message-shaping.js";
import { decideProviderFieldRefusal, type ProviderFieldLatches } from "./provider-fields.js";

/** The reasoning efforts negotiate may step through, cheapest first; a refused rung is answered with the next one up. */
export const EFFORT_LADDER: readonly string[] = Object.freeze(["none", "minimal", "low", "medium", "high"]);

/** The endpoint latches a refusal can flip (the shape of an endpoint record). */
export interface EndpointLatches {
  strictSchemas: boolean;
  usageInStream: boolean;
  /** The reasoning field the endpoint's listing named, where it named one. */
  reasoningField?: string | undefined;
}

/** The model latches a refusal can flip (the shape of a model record). */
export interface ModelLatches extends ReplayLatches, ShapingLatches, ProviderFieldLatches {
  legacyTokenLimit: boolean;
  chosenTemperature: boolean;
  structuredOutput: boolean;
  reasoningEffort: boolean;
  refusedEfforts: string[];
  droppedFields: string[];
}

export type { Answer, Decision } from "./refusal-answer.js";

const PASS: Decision = { kind: "pass" };

function addOnce(list: string[], value: string): void {
  if (!list.includes(value)) list.push(value);
}

function effortAnswer(reading: RefusalReading, model: ModelLatches, name: string, sent: Record<string, unknown> | undefined): Decision {
  const sentEffort = typeof sent?.reasoning_effort === "string" ? sent.reasoning_effort.toLowerCase() : undefined;
  const refused = reading.effort?.refused ?? sentEffort;
  if (!refused) return PASS;
  const index = EFFORT_LADDER.indexOf(refused);
  if (index < 0) return PASS;
  if (model.refusedEfforts.includes(refused)) {
    return {
      kind: "stuck",
      refused: `reasoning_effort ${refused}`,
      message: `Model ${name} refused reasoning effort "${refused}" again after it was latched off; the send callback must build the body with effortFor.`,
    };
  }
  const supported = reading.effort?.supported?.filter((value) => EFFORT_LADDER.includes(value));
  let latched: string[];
  let next: string | undefined;
  if (supported && supported.length > 0) {
    next = EFFORT_LADDER.slice(index + 1).find((rung) => supported.includes(rung));
    latched = EFFORT_LADDER.filter((rung) => !supported.includes(rung) || rung === refused);
  } else {
    next = EFFORT_LADDER[index + 1];
    latched = [refused];
  }
  if (!next) return PASS;
  const to = next;
  return {
    kind: "answer",
    answers: [
      {
        what: `reasoning_effort ${refused}`,
        latch: `effort:${refused}`,
        already: false,
        field: "reasoning_effort",
        apply: () => {
          for (const rung of latched) addOnce(model.refusedEfforts, rung);
        },
        notice: `Model ${name} does not take reasoning effort "${refused}"; asking for "${to}" instead, which may spend more tokens.`,
      },
    ],
  };
}

/** Options of {@link decideRefusal}, after its positional arguments. */
export interface DecideRefusalOptions {
  /** Whether a refusal of tools as such is answered by describing them in the prompt. @default false */
  toolsInPrompt?: boolean;
}

/**
 * Decides what answers a failed attempt: the latches to flip before re-sending, a clear stop where
 * the same refusal came back after its latch, or "pass" for a failure the request cannot do
 * without (a refused value, an invalid schema, an overflow, a rate limit, anything unreadable).
 */
export function decideRefusal(
  error: unknown,
  supports: EndpointLatches,
  model: ModelLatches | undefined,
  name: string,
  droppable: readonly string[],
  sent: Record<string, unknown> | undefined,
  options: DecideRefusalOptions = {},
): Decision {
  if (isOverflow(error) || isModelLoading(error)) return PASS;
  if (error instanceof Error && (error.name === "AbortError" || error.name === "APIUserAbortError")) return PASS;
  const reading = readRefusal(error);
  const status = reading.description.status;
  if (status === 401 || status === 403 || status === 429) return PASS;
  const combination = decideCombination(reading.description.message, model, name, droppable, sent);
  if (combination) return combination;
  const shaping = decideShapingRefusal(reading.description.message, model, name, sent, { toolsInPrompt: options.toolsInPrompt === true });
  if (shaping) return shaping;
  const replay = model ? decideReplayRefusal(reading.description.message, model, supports.reasoningField, name, sent) : undefined;
  if (replay) return replay.kind === "stuck" ? replay : { kind: "answer", answers: [replay.answer] };
  const providerField = decideProviderFieldRefusal(reading.description.message, model, name, sent);
  if (providerField) return providerField;
  if (reading.effort) return model ? effortAnswer(reading, model, name, sent) : PASS;
  if (reading.effortUnsupported) {
    if (!model) return PASS;
    return {
      kind: "answer",
      answers: [effortOffAnswer(model, name)],
    };
  }
  if (reading.invalidToolSchema || safeGrammarError(error)) {
    if (!supports.strictSchemas) return PASS;
    return { kind: "answer", answers: [strictAnswer(supports)] };
  }
  if (SAMPLER_FAILURE.test(reading.description.message) && formatOnly(sent)) {
    // Not the schema (no rewrite of it is taken): the server cannot hold this model's reply to one.
    return model ? { kind: "answer", answers: [samplerAnswer(model, name, reading.description.message)] } : PASS;
  }
  if (reading.fields.length === 0) {
    return NAMES_NOTHING.test(reading.description.message) ? namelessAnswer(status, model, name, droppable, sent) : PASS;
  }
  const answers: Answer[] = [];
  const seen = new Set<string>();
  for (const field of reading.fields) {
    const top = topLevelField(field);
    const leaf = leafField(field);
    let answer: Answer | undefined;
    if (leaf === "strict" && (top === "strict" || top === "tools" || top === "response_format" || top === "functions")) {
      answer = strictAnswer(supports);
    } else if (top === "stream_options") {
      answer = {
        what: "stream_options",
        latch: "usageInStream",
        already: !supports.usageInStream,
        field: "stream_options",
        apply: () => {
          supports.usageInStream = false;
        },
        notice: "The endpoint refused stream_options; token usage is no longer asked for in the stream.",
      };
    } else if (top === "reasoning_effort") {
      if (!model) return PASS;
      answer = effortOffAnswer(model, name);
    } else if (top === "max_tokens" || top === "max_completion_tokens") {
      if (!model || reading.outOfRange) return PASS;
      const legacy = top === "max_completion_tokens";
      answer = {
        what: top,
        latch: "legacyTokenLimit",
        already: model.legacyTokenLimit === legacy,
        field: top,
        apply: () => {
          model.legacyTokenLimit = legacy;
        },
        notice: `Model ${name} refused ${top}; sending the reply ceiling as ${legacy ? "max_tokens" : "max_completion_tokens"} from now on.`,
      };
    } else if (top === "temperature") {
      if (!model || reading.outOfRange) return PASS;
      answer = {
        what: "temperature",
        latch: "chosenTemperature",
        already: !model.chosenTemperature,
        field: "temperature",
        apply: () => {
          model.chosenTemperature = false;
        },
        notice: `Model ${name} does not let the temperature be chosen; sending none from now on, so its default applies.`,
      };
    } else if (top === "response_format") {
      if (!model || reading.invalidSchema || reading.outOfRange) return PASS;
      answer = structuredOutputAnswer(model, `Model ${name} refused response_format; asking for JSON in words from now on.`);
    } else if (droppable.includes(top)) {
      if (!model) return PASS;
      answer = {
        what: top,
        latch: `drop:${top}`,
        already: model.droppedFields.includes(top),
        field: top,
        apply: () => addOnce(model.droppedFields, top),
        notice: `The endpoint refused "${field}" for model ${name}; sending the request without ${top === field ? "it" : top} from now on.`,
      };
    } else if (sent !== undefined && !(top in sent) && reading.fields.length > 1) {
      // A name the request did not carry, listed beside ones it did: the words, not the request.
      continue;
    } else {
      return PASS;
    }
    if (!seen.has(answer.latch)) {
      seen.add(answer.latch);
      answers.push(answer);
    }
  }
  return answers.length > 0 ? { kind: "answer", answers } : PASS;
}

/** llama.cpp's words when it could not set up the sampler; with a grammar that failed to parse it is a grammar error instead. */
const SAMPLER_FAILURE = /failed to initiali[sz]e samplers?/i;

/** Whether a sent body asked for a json_schema reply and declared no tools, so the sampler's failure is the format's. */
function formatOnly(sent: Record<string, unknown> | undefined): boolean {
  const format = sent?.response_format;
  const tools = sent?.tools;
  return typeof format === "object" && format !== null && (format as { type?: unknown }).type === "json_schema" && !(Array.isArray(tools) && tools.length > 0);
}

function samplerAnswer(model: ModelLatches, name: string, words: string): Answer {
  const said = words.replace(/\s+/g, " ").trim().slice(0, 200);
  return structuredOutputAnswer(
    model,
    `Model ${name} cannot have its reply held to a json_schema here (the server said: ${said}); asking for JSON in words from now on.`,
  );
}

/** Turns structured output off for the model: JSON is asked for in words from then on. */
function structuredOutputAnswer(model: ModelLatches, notice: string): Answer {
  return {
    what: "response_format",
    latch: "structuredOutput",
    already: !model.structuredOutput,
    field: "response_format",
    apply: () => {
      model.structuredOutput = false;
    },
    notice,
  };
}

/** The words of a refusal that says nothing of what was refused: "Invalid request", "Bad Request". */
const NAMES_NOTHING =
  /^(?:\d{3} )?(?:invalid request|bad request|invalid argument|invalid parameters?)[.!]?(?: \| (?:\d{3} )?(?:invalid request|bad request|invalid argument|invalid parameters?)[.!]?)*$/i;

/**
 * A 400 that names no field ("Invalid request", "Bad Request"): the first field the caller marked
 * droppable that the request still carries is dropped, one per refusal in the order given, each
 * with a notice; with none left the refusal passes to the caller. Nothing else is ever dropped.
 */
function namelessAnswer(
  status: number | undefined,
  model: ModelLatches | undefined,
  name: string,
  droppable: readonly string[],
  sent: Record<string, unknown> | undefined,
): Decision {
  if (status !== 400 && status !== 422) return PASS;
  if (!model || sent === undefined) return PASS;
  const field = droppable.find((candidate) => candidate in sent && !model.droppedFields.includes(candidate));
  if (field === undefined) return PASS;
  return {
    kind: "answer",
    answers: [
      {
        what: field,
        latch: `drop:${field}`,
        already: false,
        field,
        apply: () => addOnce(model.droppedFields, field),
        notice: `The endpoint refused the request for model ${name} without naming a field; sending it without "${field}", the next field marked droppable, from now on.`,
      },
    ],
  };
}

function safeGrammarError(error: unknown): boolean {
  try {
    return isGrammarError(error);
  } catch {
    return false;
  }
}

function strictAnswer(supports: EndpointLatches): Answer {
  return {
    what: "strict",
    latch: "strictSchemas",
    already: !supports.strictSchemas,
    apply: () => {
      supports.strictSchemas = false;
    },
    notice: "The endpoint could not take strict tool schemas; sending them relaxed from now on.",
  };
}

function effortOffAnswer(model: ModelLatches, name: string): Answer {
  return {
    what: "reasoning_effort",
    latch: "reasoningEffort",
    already: !model.reasoningEffort,
    field: "reasoning_effort",
    apply: () => {
      model.reasoningEffort = false;
    },
    notice: `Model ${name} takes no reasoning effort; sending none from now on.`,
  };
}
