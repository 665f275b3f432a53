/**
 * @module wire/capabilities-server
 * Which servers hold answers to a grammar built from the schema they are sent, as their model
 * listing says, and noting that on an endpoint's record when a listing is read.
 *
 * Only an `owned_by` value a server is known to give itself is read as that server: OpenAI's own
 * API answers `system` or `openai` there, and a proxy in front of a grammar server often says
 * `openai` for every model, which is read as nothing.
 */

import type { Endpoint } from "../shapes/config.js";
import { capabilitiesForIn } from "./capabilities.js";
import type { RuntimeState } from "../state/state.js";
import { isPlainRecord } from "../text/guards.js";

/**
 * The `owned_by` values of the servers that build a grammar from the schema, and the server's name.
 *
 * - `llamacpp`: llama.cpp's `/v1/models` (tools/server/server-context.cpp, `{"owned_by",
 *   "llamacpp"}`; recorded from llama-server in test/fixtures/llama.cpp/listing.json). Its
 *   json-schema-to-grammar converter turns the tool parameters and a json_schema response format
 *   into the grammar the sampler follows; `strict` is accepted and ignored.
 * - `vllm`: vLLM's `ModelCard` (vllm/entrypoints/openai/protocol.py, `owned_by: str = "vllm"`).
 *   A json_schema response format, and tool calls under a required or named `tool_choice`, are
 *   held to the schema by its structured-output backend (xgrammar, guidance).
 * - `organization_owner`: LM Studio's `/v1/models`, whose entries carry only `id`, `object` and
 *   this owner (quoted in github.com/JetBrains/koog/issues/139). Its structured output holds the
 *   reply to the schema (lmstudio.ai/docs/advanced/structured-output): llama.cpp's grammar for a
 *   GGUF model, Outlines for an MLX one (lmstudio.ai/blog/lmstudio-v0.3.4).
 */
export const GRAMMAR_OWNERS: ReadonlyMap<string, string> = new Map([
  ["llamacpp", "llama.cpp"],
  ["vllm", "vLLM"],
  ["organization_owner", "LM Studio"],
]);

/**
 * Names the grammar-constrained server a model listing comes from, or undefined where it names
 * none: every entry that says who owns it must name the same one of {@link GRAMMAR_OWNERS}.
 */
export function grammarServerOf(listing: unknown): string | undefined {
  if (!Array.isArray(listing)) return undefined;
  const owners = new Set<string>();
  for (const entry of listing) {
    if (isPlainRecord(entry) && typeof entry.owned_by === "string") owners.add(entry.owned_by);
  }
  if (owners.size !== 1) return undefined;
  return GRAMMAR_OWNERS.get([...owners][0] as string);
}

/**
 * Notes on an endpoint's record what its listing says: a grammar-constrained server gets
 * `grammarConstrained` true and `strictSchemas` false, and a vLLM listing `reasoningField`
 * "reasoning" (vllm/entrypoints/harmony_utils.py, parse_chat_input_to_harmony_message, reads an
 * assistant message's analysis only from `reasoning`). Answers the server's name where the
 * record was changed by it. Never throws.
 *
 * @internal
 */
export function noteListingIn(state: RuntimeState, endpoint: Pick<Endpoint, "baseUrl" | "apiKey">, listing: unknown): string | undefined {
  try {
    const server = grammarServerOf(listing);
    if (server === undefined || typeof endpoint?.baseUrl !== "string") return undefined;
    const supports = capabilitiesForIn(state, endpoint.baseUrl, endpoint.apiKey);
    // vLLM's gpt-oss path reads reasoning back only from `reasoning` and ignores any other field.
    if (server === "vLLM") supports.reasoningField = "reasoning";
    if (supports.grammarConstrained) return undefined;
    supports.grammarConstrained = true;
    supports.strictSchemas = false;
    return server;
  } catch {
    return undefined;
  }
}
