/**
 * @module wire/refusal-reading
 * Reads the words of a failed chat request as a refusal: which request fields they name, whether
 * they object to a field outright or only to the value it was given, and what they say of a
 * reasoning effort. wire/refusal decides from this reading which latch, if any, answers it.
 *
 * Servers word the same refusal several ways ("Unrecognized request argument supplied: min_p",
 * "Unknown parameter: 'min_p'.", a pydantic `extra_forbidden` list, "`strict` mode … is not
 * supported"), and their status codes say little, so this reads the text of every shape an error
 * can arrive in through {@link describeError} and never throws.
 */

import { describeError, type ErrorDescription } from "../text/error-body.js";

/** A refusal read off a failed request. */
export interface RefusalReading {
  /** What the failure said, flattened. */
  description: ErrorDescription;
  /** Field names the words say the server does not take, as written (a nested name keeps its path). */
  fields: string[];
  /** True where the words object to a number being out of range rather than to a field. */
  outOfRange: boolean;
  /** True where the words say a schema is invalid, which the caller has to fix. */
  invalidSchema: boolean;
  /** True where the words say a tool's schema is invalid for strict mode (OpenAI's "Invalid schema for function"). */
  invalidToolSchema: boolean;
  /** A refused reasoning effort: the value (where the words name it) and the values offered instead. */
  effort?: { refused?: string; supported?: string[] } | undefined;
  /** True where `reasoning_effort` as such is not taken (a model that takes no effort). */
  effortUnsupported: boolean;
}

const REFUSAL_WORDS =
  /unsupported|not supported|unrecognized|unrecognised|unknown (?:parameter|field|argument|name)|not (?:allowed|permitted|available)|extra inputs|extra_forbidden|does not support|invalid (?:parameter|request content)|is not valid for|cannot be used|only the default|must be one of|but got|can only be (?:defined|used|set)|supported values are|input should be/i;

const RANGE_WORDS =
  /too (?:large|small|high|low|big)|at most|at least|maximum value|minimum value|out of range|must be (?:between|less|greater|at|<|>|a (?:number|value) (?:between|less|greater))|expected a value|less than or equal|greater than or equal|above (?:the )?max|below (?:the )?min|exceeds? the (?:maximum|limit)/i;

const SCHEMA_WORDS = /invalid schema|schema (?:is )?invalid|is not valid under any of the given schemas|invalid json ?schema|'required' is required/i;

const NAME = String.raw`[A-Za-z_][\w.\-]*(?:\[\d+\][\w.\-]*)*`;

const FIELD_PATTERNS: RegExp[] = [
  new RegExp(String.raw`unknown parameter:?\s*['"\`]?(${NAME})`, "gi"),
  new RegExp(String.raw`unsupported parameter:?\s*['"\`]?(${NAME})`, "gi"),
  new RegExp(String.raw`unsupported value:?\s*['"\`](${NAME})['"\`]`, "gi"),
  new RegExp(String.raw`unknown (?:field|argument|name):?\s*['"\`]?(${NAME})`, "gi"),
  new RegExp(
    String.raw`['"\`](${NAME})['"\`]\s*(?:mode\s+)?(?:on [\w ]+?\s+)?(?:is|are)\s+(?:currently\s+)?(?:not supported|unsupported|not allowed|not permitted|not available|unknown|not recognized)`,
    "gi",
  ),
  new RegExp(String.raw`(?:parameter|property|field|argument)\s+['"\`](${NAME})['"\`]`, "gi"),
  new RegExp(String.raw`(${NAME}):\s*extra inputs are not permitted`, "gi"),
  new RegExp(String.raw`['"\`](${NAME})['"\`]\s*[-–:]\s*extra inputs are not permitted`, "gi"),
  new RegExp(String.raw`['"]?loc['"]?:\s*[\[(]\s*['"]body['"]\s*,\s*['"](${NAME})['"]`, "gi"),
];

const SUPPLIED = new RegExp(String.raw`unrecognized request arguments? supplied:\s*(${NAME}(?:\s*,\s*${NAME})*)`, "gi");

const SUGGESTED = new RegExp(String.raw`\buse\s+['"\`]?(${NAME})['"\`]?\s+instead`, "gi");

const KNOWN_BARE = /\b(stream_options|reasoning_effort|max_completion_tokens|max_tokens|response_format)\b/g;

/** vLLM words the stream_options refusal without the underscore. */
const STREAM_OPTIONS_WORDS = /\bstream options\b/i;

function cleanName(name: string): string {
  return name.replace(/[.-]+$/, "");
}

function quotedValues(text: string): string[] {
  return [...text.matchAll(/['"`]([\w-]+)['"`]/g)].map((match) => match[1] as string);
}

function readEffort(message: string): { refused?: string; supported?: string[] } | undefined {
  if (!/reasoning[_ .]?effort|reasoning\.effort/i.test(message)) return undefined;
  if (
    !/unsupported value|invalid value|does not support '|not supported with|supported values|must be one of|expected one of|not a valid|input should be/i.test(
      message,
    )
  ) {
    return undefined;
  }
  if (/unsupported parameter|unknown parameter|unrecognized request argument/i.test(message) && !/supported values|does not support '/i.test(message)) {
    return undefined;
  }
  const result: { refused?: string; supported?: string[] } = {};
  const refused =
    /does not support ['"`]([\w-]+)['"`]/i.exec(message) ??
    /invalid value:?\s*['"`]([\w-]+)['"`]/i.exec(message) ??
    /['"`]([\w-]+)['"`] is not (?:a )?(?:valid|supported)/i.exec(message) ??
    /input_value=['"`]([\w-]+)['"`]/i.exec(message);
  if (refused?.[1] && refused[1] !== "reasoning_effort") result.refused = refused[1].toLowerCase();
  const list =
    /(?:supported values are|must be one of|expected one of|supported values:|valid values are|input should be)\s*:?\s*([^.\n]*(?:\.[^\s][^.\n]*)*)/i.exec(
      message,
    );
  if (list?.[1]) {
    // A pydantic message carries its own details in brackets after the list ([type=enum, input_value=…]).
    const values = quotedValues(list[1].split("[")[0] ?? "").map((value) => value.toLowerCase());
    if (values.length > 0) result.supported = [...new Set(values)];
  }
  return result;
}

/**
 * Azure words a refused effort without naming the field ("Invalid value: 'none'. Supported values
 * are: 'low', 'medium', and 'high'."), and names it only in `param`.
 */
function readEffortByParam(description: ErrorDescription): { refused?: string; supported?: string[] } | undefined {
  if (description.param !== "reasoning_effort" || /reasoning[_ .]?effort/i.test(description.message)) return undefined;
  return readEffort(`reasoning_effort: ${description.message}`);
}

/** The top-level request field a possibly nested name (`chat_template_kwargs.enable_thinking`, `tools[0].function.strict`) sits under. */
export function topLevelField(name: string): string {
  const match = /^[^.[]+/.exec(name);
  return match ? match[0] : name;
}

/** The last segment of a nested name (`tools[0].function.strict` → `strict`). */
export function leafField(name: string): string {
  const parts = name.split(/[.[\]]+/).filter(Boolean);
  return parts[parts.length - 1] ?? name;
}

/** Reads a failure as a refusal; a failure whose words name no field comes back with `fields` empty. */
export function readRefusal(error: unknown): RefusalReading {
  const description = describeError(error);
  const message = description.message;
  const fields = new Set<string>();
  const refusing = REFUSAL_WORDS.test(message) || description.code === "unknown_parameter" || description.code === "unsupported_parameter";
  if (refusing) {
    for (const pattern of FIELD_PATTERNS) {
      for (const match of message.matchAll(pattern)) if (match[1]) fields.add(cleanName(match[1]));
    }
    for (const match of message.matchAll(SUPPLIED)) {
      for (const name of (match[1] ?? "").split(",")) if (name.trim()) fields.add(cleanName(name.trim()));
    }
    for (const match of message.matchAll(KNOWN_BARE)) if (match[1]) fields.add(match[1]);
    if (STREAM_OPTIONS_WORDS.test(message)) fields.add("stream_options");
    for (const match of message.matchAll(SUGGESTED)) if (match[1]) fields.delete(cleanName(match[1]));
    if (description.param && /^[A-Za-z_][\w.[\]-]*$/.test(description.param) && description.param !== "messages") {
      fields.add(description.param);
    }
  }
  const effort = readEffort(message) ?? readEffortByParam(description);
  const effortUnsupported =
    effort === undefined &&
    /reasoning_effort/i.test(message) &&
    /unsupported parameter|unknown parameter|unrecognized request argument|is not supported|not supported with this model|extra inputs/i.test(message);
  return {
    description,
    fields: [...fields].filter((name) => name.length > 0 && name.length <= 200),
    outOfRange: RANGE_WORDS.test(message),
    invalidSchema: SCHEMA_WORDS.test(message),
    invalidToolSchema: /invalid schema for function/i.test(message) || description.code === "invalid_function_parameters",
    ...(effort ? { effort } : {}),
    effortUnsupported,
  };
}
