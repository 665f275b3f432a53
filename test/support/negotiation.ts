/**
 * @module negotiation
 * What the tests of `negotiate` share: a loopback endpoint with a client and a fresh latch record
 * on a runtime of its own, the request body the specification's example builds from the records
 * on each attempt, and one negotiated turn sent with it.
 */
import type OpenAI from "openai";
import { capabilitiesForIn, effortFor, type EndpointCapabilities, type ModelCapabilities } from "../../src/wire/capabilities.js";
import { negotiate, type NegotiateOptions } from "../../src/wire/negotiate.js";
import { getClientIn } from "../../src/wire/client.js";
import type { ModelParams } from "../../src/shapes/config.js";
import { clearState, createState, type RuntimeState } from "../../src/state/state.js";
import { streamTurn } from "../../src/wire/stream.js";
import { startEndpoint, type EndpointOptions, type EndpointServer } from "./endpoint.js";

/** One endpoint, the runtime it is read from, and the notices a negotiation gave. */
export interface Context {
  server: EndpointServer;
  state: RuntimeState;
  client: OpenAI;
  supports: EndpointCapabilities;
  notices: string[];
}

/**
 * Runs a test against a fresh endpoint on a fresh runtime, closing both however it ends; `extra`
 * adds what a test file's context holds beside these (its own records, a clock).
 */
export async function withEndpoint<Extra extends object = object>(
  options: EndpointOptions,
  run: (context: Context & Extra) => Promise<void>,
  extra: () => Extra = () => ({}) as Extra,
): Promise<void> {
  const server = await startEndpoint(options);
  const state = createState();
  try {
    await run({
      server,
      state,
      client: getClientIn(state, { baseUrl: server.baseUrl }),
      supports: capabilitiesForIn(state, server.baseUrl),
      notices: [],
      ...extra(),
    });
  } finally {
    clearState(state);
    await server.close();
  }
}

/** A strict tool whose schema carries `not`, which a grammar server refuses. */
export const STRICT_TOOL = {
  type: "function" as const,
  function: {
    name: "lookup",
    strict: true,
    parameters: { type: "object", properties: { q: { type: "string", not: { const: "" } } }, required: ["q"], additionalProperties: false },
  },
};

/** The same tool as a relaxed schema. */
export const RELAXED_TOOL = { type: "function" as const, function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } } };

/** A strict json_schema response format. */
export const FORMAT = { type: "json_schema", json_schema: { name: "answer", strict: true, schema: { type: "object", properties: { a: { type: "string" } } } } };

/** What a request asks for besides the model settings: tools, a response format. */
export interface Wants {
  tools?: boolean;
  format?: boolean;
}

/** The body the spec's own example builds: every field rebuilt from the records per attempt. */
export function bodyFor(config: ModelParams, supports: EndpointCapabilities, model: ModelCapabilities | undefined, wants: Wants = {}): Record<string, unknown> {
  const asked = effortFor(model, config.reasoningEffort);
  const body: Record<string, unknown> = {
    model: config.model,
    messages: [{ role: "user", content: "hello" }],
    stream: true,
    ...(supports.usageInStream ? { stream_options: { include_usage: true } } : {}),
    ...(asked ? { reasoning_effort: asked } : {}),
    ...(config.maxTokens ? (model?.legacyTokenLimit === false ? { max_completion_tokens: config.maxTokens } : { max_tokens: config.maxTokens }) : {}),
    ...(model?.chosenTemperature && config.temperature !== undefined ? { temperature: config.temperature } : {}),
  };
  if (wants.tools) body.tools = [supports.strictSchemas ? STRICT_TOOL : RELAXED_TOOL];
  if (wants.format && model?.structuredOutput !== false) body.response_format = FORMAT;
  for (const [field, value] of Object.entries(config.extraBody ?? {})) if (!model?.droppedFields.includes(field)) body[field] = value;
  return body;
}

/** Sends one negotiated turn built by {@link bodyFor}, collecting its notices on the context. */
export function sendTurn(context: Context, config: ModelParams, wants: Wants = {}, extra: Partial<NegotiateOptions> = {}) {
  let sent: Record<string, unknown> | undefined;
  return negotiate(
    context.supports,
    (supports, produced, model) => {
      sent = bodyFor(config, supports, model, wants);
      return streamTurn(context.client, sent as never, { produced });
    },
    {
      model: config.model,
      droppable: Object.keys(config.extraBody ?? {}),
      onNotice: (message) => context.notices.push(message),
      sentBody: () => sent,
      ...extra,
    },
  );
}
