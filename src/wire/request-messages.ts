/**
 * @module wire/request-messages
 * The messages of one request body shaped for the endpoint and model it goes to: provider fields
 * kept only for the model that wrote them, then what the model's template refused about the
 * transcript's shape (system placement, tool-call ids, tools as such).
 */

import type { Message, ModelParams, ToolDefinition } from "../shapes/config.js";
import { shapeProviderFields } from "./provider-fields.js";
import { applyShaping, type ShapingLatches } from "./message-shaping.js";

/** The part of a body this shaping reads and writes. */
interface ShapedBody {
  messages: Message[];
  tools?: ToolDefinition[];
}

/** Options of {@link shapeRequestMessages}. */
export interface ShapeRequestOptions {
  /** The endpoint's base URL; absent, `config.baseUrl` where it has one. */
  baseUrl?: string;
  /** Whether a model latched `toolsInPrompt` gets its tools described in the prompt. @default true */
  toolsInPrompt?: boolean;
  /** Told a sentence for each provider field left out because it cannot be sent. */
  onFieldNotice?: (text: string) => void;
}

/**
 * Rewrites a body's messages in place for its endpoint and model, and says whether the tools
 * went into the system prompt (the caller then declares none). @internal
 */
export function shapeRequestMessages(
  body: ShapedBody,
  config: ModelParams,
  model: (ShapingLatches & { droppedMessageFields?: string[] }) | undefined,
  options: ShapeRequestOptions,
): { toolsInPrompt: boolean } {
  const fromConfig = (config as { baseUrl?: unknown }).baseUrl;
  const baseUrl = typeof options.baseUrl === "string" ? options.baseUrl : typeof fromConfig === "string" ? fromConfig : undefined;
  const onNotice = typeof options.onFieldNotice === "function" ? options.onFieldNotice : undefined;
  body.messages = shapeProviderFields(body.messages, {
    ...(baseUrl !== undefined ? { baseUrl } : {}),
    model: config.model,
    dropped: Array.isArray(model?.droppedMessageFields) ? model.droppedMessageFields : [],
    ...(onNotice ? { onNotice } : {}),
  });
  const shaped = applyShaping(body.messages, model, { tools: body.tools, ...(options.toolsInPrompt === false ? { toolsInPrompt: false } : {}) });
  body.messages = shaped.messages;
  return { toolsInPrompt: shaped.toolsInPrompt };
}
