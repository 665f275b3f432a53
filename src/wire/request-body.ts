/**
 * @module request-body
 * The one place a streamed chat request's body is decided, from the model settings and what the
 * endpoint and the model have refused so far.
 *
 * {@link buildBody} is meant to be called inside negotiate's send callback, so every attempt is
 * rebuilt from the latest latches; {@link orderTools} is the tool ordering it applies, for a
 * caller with its own body.
 */

import type { Message, ModelParams, ToolDefinition } from "../shapes/config.js";
import { effortFor, type EndpointCapabilities, type ModelCapabilities } from "./capabilities.js";
import { defaultState, type RuntimeState } from "../state/state.js";
import { declareToolsIn } from "./tools-cache.js";
import { positiveInteger } from "../text/guards.js";
import { applyCombinations } from "./refusal-combination.js";
import { applyReplayForm, replayFormOf } from "./reasoning-replay.js";
import { shapeRequestMessages } from "./request-messages.js";

/**
 * How a request's tools are ordered: `true` or absent for name order, `false` for the caller's
 * own order, or a comparator.
 */
export type ToolOrder = boolean | ((a: ToolDefinition, b: ToolDefinition) => number);

/** A streamed chat completion body as buildBody makes it. */
export interface RequestBody {
  model: string;
  messages: Message[];
  stream: true;
  stream_options?: { include_usage: true } | undefined;
  tools?: ToolDefinition[] | undefined;
  reasoning_effort?: string | undefined;
  max_tokens?: number | undefined;
  max_completion_tokens?: number | undefined;
  temperature?: number | undefined;
  [field: string]: unknown;
}

/** Options for {@link buildBody}, after its positional arguments. */
export interface BuildBodyOptions {
  /**
   * Told, for each tool declared with `strict: false` because its schema is past strict mode's
   * limits, the notice {@link sanitizeTools} words and the tool's name; only when the body sends
   * strict schemas (not relaxed ones), and on every call, so a caller building per attempt keeps
   * its own record of what it has said. @default none
   */
  onNotice?: ((text: string, tool: string) => void) | undefined;
  /**
   * The endpoint's base URL, for telling whether an assistant message's provider fields came
   * from this endpoint; absent, a `baseUrl` on `config` is used, and failing that the model alone
   * decides. @default config.baseUrl
   */
  baseUrl?: string | undefined;
  /**
   * Whether a model latched `toolsInPrompt` gets its tools described in the system prompt (and
   * none declared); false declares them regardless. @default true
   */
  toolsInPrompt?: boolean | undefined;
  /** Told a sentence for each provider field left out because it cannot be sent (not JSON, over 64 KB). @default none */
  onFieldNotice?: ((text: string) => void) | undefined;
}

/** Fields the loop owns, which extraBody cannot replace. */
const OWNED: ReadonlySet<string> = new Set(["model", "messages", "stream", "tools"]);

function nameOf(tool: ToolDefinition): string {
  const name = tool?.function?.name;
  return typeof name === "string" ? name : "";
}

function byName(a: ToolDefinition, b: ToolDefinition): number {
  const left = nameOf(a);
  const right = nameOf(b);
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * Returns the tools in the order a request declares them: by name unless told otherwise.
 *
 * Name order makes the tool block, which a chat template renders ahead of everything else, a
 * property of the set of tools rather than of the order they were gathered in, so a prompt cache
 * survives a restart. Names compare by code unit, the same in every locale; the sort is stable.
 * `false` keeps the caller's order and a comparator orders another way. The input is not changed.
 *
 * @param tools - The tools to declare.
 * @param order - `true` or absent for name order, `false` for the given order, or a comparator.
 */
export function orderTools(tools: readonly ToolDefinition[], order: ToolOrder = true): ToolDefinition[] {
  const copy = Array.isArray(tools) ? [...tools] : [];
  if (order === false) return copy;
  if (typeof order === "function") return copy.sort(order);
  return copy.sort(byName);
}

/** Whether a latch says the model or endpoint refused this extraBody field. */
function latchedOff(field: string, supports: EndpointCapabilities, model: ModelCapabilities | undefined): boolean {
  if (model?.droppedFields?.includes(field)) return true;
  switch (field) {
    case "stream_options":
      return !supports.usageInStream;
    case "temperature":
      return model !== undefined && !model.chosenTemperature;
    case "reasoning_effort":
      return model !== undefined && !model.reasoningEffort;
    case "max_tokens":
      return model?.legacyTokenLimit === false;
    case "response_format":
      return model !== undefined && !model.structuredOutput;
    default:
      return false;
  }
}

/**
 * Builds the body of a streamed chat completion from the model settings and the latches.
 *
 * - `model`, `messages` and `stream: true` always; `stream_options: { include_usage: true }` while
 *   the endpoint takes it.
 * - `tools` in {@link orderTools} order, sanitized, and relaxed once the endpoint refused strict
 *   schemas or is grammar-constrained; left out when there are none. A tool past strict mode's
 *   limits goes with `strict: false`, and `options.onNotice` hears of it while strict schemas are sent.
 *   Each definition is rewritten once and kept in the runtime while its `function` object, name,
 *   description and `parameters` object stay the same, so a tool added, removed or given a new
 *   schema object is seen at once; a schema edited in place inside the same `parameters` object
 *   is not. The declared definitions are shared by later requests: read them, do not change them.
 * - Provider fields kept from a stream go back only to the endpoint and model that sent them,
 *   less those the model refused; later system messages are folded into the first, tool-call
 *   ids rewritten, and tools described in the system prompt, where the model latched those
 *   (shapeRequestMessages).
 * - Each assistant turn's reasoning in the form the model and endpoint take (applyReplayForm):
 *   under `reasoning_content`, or `reasoning` on a vLLM listing or once the model refused the
 *   first, or not at all once it refused both; on every assistant turn while tools are declared
 *   once the model asked for it back; folded with the text where its template refused both.
 * - `reasoning_effort` from effortFor, left out where that is "".
 * - The reply ceiling (`maxTokens` above zero) as `max_completion_tokens` only where the model
 *   latched `legacyTokenLimit` to false, otherwise as `max_tokens`, so an absent model record
 *   sends the older spelling.
 * - `temperature` only while the model record says it is ours to choose.
 * - `extraBody` last: it may override anything but `model`, `messages`, `stream` and `tools`;
 *   a field the model refused (a dropped field, or one a latch names, such as `temperature` once
 *   `chosenTemperature` is false) is left out.
 * - Last, what the model refused only in this request's company: with tools, `droppedWithTools`
 *   is left out and `effortWithTools` (where set) is the effort sent; without tools,
 *   `droppedWithoutTools` is left out.
 *
 * @param config - The model name and its settings.
 * @param supports - The endpoint's record, as negotiate hands it to the send callback.
 * @param model - The model's record, as negotiate hands it; absent sends no effort and no temperature.
 * @param messages - The transcript to send.
 * @param tools - The tools to declare.
 * @param order - How to order the tools. @default true (name order)
 * @param options - Where to say that a tool goes with strict off. @default {}
 * @example
 * ```ts
 * const turn = await negotiate(supports, (supports, produced, model) =>
 *   streamTurn(client, buildBody(config, supports, model, messages, tools), { produced }),
 *   { model: config.model, droppable: Object.keys(config.extraBody ?? {}) });
 * ```
 */
export function buildBody(
  config: ModelParams,
  supports: EndpointCapabilities,
  model: ModelCapabilities | undefined,
  messages: readonly Message[],
  tools?: readonly ToolDefinition[],
  order?: ToolOrder,
  options: BuildBodyOptions = {},
): RequestBody {
  return buildBodyIn(defaultState, config, supports, model, messages, tools, order, options);
}

/** {@link buildBody} on an explicit runtime state, whose cache holds the tools' rewrites. @internal */
export function buildBodyIn(
  state: RuntimeState,
  config: ModelParams,
  supports: EndpointCapabilities,
  model: ModelCapabilities | undefined,
  messages: readonly Message[],
  tools?: readonly ToolDefinition[],
  order?: ToolOrder,
  options: BuildBodyOptions = {},
): RequestBody {
  const body: RequestBody = { model: config.model, messages: [...(messages ?? [])], stream: true };
  if (supports.usageInStream) body.stream_options = { include_usage: true };
  if (Array.isArray(tools) && tools.length > 0) {
    const strict = supports.strictSchemas && supports.grammarConstrained !== true;
    const { tools: declared, strictOff } = declareToolsIn(state, orderTools(tools, order), strict);
    body.tools = declared;
    const onNotice = typeof options?.onNotice === "function" ? options.onNotice : undefined;
    if (strict && onNotice) {
      for (const [text, tool] of strictOff) {
        try {
          onNotice(text, tool);
        } catch {
          // A host's notice callback that throws does not cost the request.
        }
      }
    }
  }
  body.messages = applyReplayForm(body.messages, replayFormOf(model, supports.reasoningField), body.tools !== undefined);
  if (shapeRequestMessages(body, config, model, options ?? {}).toolsInPrompt) delete body.tools;
  const effort = effortFor(model, config.reasoningEffort);
  if (effort) body.reasoning_effort = effort;
  const ceiling = positiveInteger(config.maxTokens);
  if (ceiling !== undefined) {
    if (model?.legacyTokenLimit === false) body.max_completion_tokens = ceiling;
    else body.max_tokens = ceiling;
  }
  if (model?.chosenTemperature && typeof config.temperature === "number" && Number.isFinite(config.temperature)) {
    body.temperature = config.temperature;
  }
  const extra = config.extraBody;
  if (extra && typeof extra === "object" && !Array.isArray(extra)) {
    for (const [field, value] of Object.entries(extra)) {
      if (OWNED.has(field) || value === undefined) continue;
      if (latchedOff(field, supports, model)) continue;
      body[field] = value;
    }
  }
  for (const field of model?.droppedFields ?? []) if (!OWNED.has(field)) delete body[field];
  applyCombinations(body, model);
  return body;
}
