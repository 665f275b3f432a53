/**
 * @module testing/profile-llama
 * What the loopback endpoint's llama.cpp profile answers besides a chat turn: its model listing,
 * `/props`, `/health`, the answer to a missing or wrong key, and the request checks the server
 * makes before any model reads the request.
 *
 * Each shape was recorded from llama-server (llama.cpp source of July 2026) by
 * scripts/record-llama.ts into test/fixtures/llama.cpp/, and test/testing/llama-profile.test.ts
 * holds this file to those recordings field by field.
 */
import { llamaError } from "./refusal-wordings.js";
import type { ErrorAnswer } from "./profile-types.js";

const created = 1_700_000_000;

/** The build the simulated server reports, in `/props` and in every chunk's `system_fingerprint`. */
export const LLAMA_BUILD = "b0-loopback";

/** llama-server's `/v1/models` entry for a model served with a window (listing.json). */
export function llamaModelEntry(id: string, window: number): Record<string, unknown> {
  return {
    id,
    aliases: [id],
    tags: [],
    object: "model",
    created,
    owned_by: "llamacpp",
    meta: {
      vocab_type: 2,
      n_vocab: 151936,
      n_ctx: window,
      n_ctx_train: Math.max(window, 131072),
      n_embd: 4096,
      n_params: 8_000_000_000,
      size: 4_900_000_000,
      ftype: "Q4_K - Medium",
    },
  };
}

/** llama-server's `/v1/models` body: the OpenAI `data` beside an Ollama-style `models` list (listing.json). */
export function llamaListing(models: Record<string, unknown>[]): unknown {
  return {
    models: models.map((model) => ({
      name: model.id,
      model: model.id,
      modified_at: "",
      size: "",
      digest: "",
      type: "model",
      description: "",
      tags: [""],
      capabilities: ["completion"],
      parameters: "",
      details: { parent_model: "", format: "gguf", family: "", families: [""], parameter_size: "", quantization_level: "" },
    })),
    object: "list",
    data: models,
  };
}

/** llama-server's `/props` body (props.json); `n_ctx` is the window each slot serves. */
export function llamaProps(id: string, window: number): unknown {
  return {
    default_generation_settings: {
      params: {
        seed: 4294967295,
        temperature: 0.8,
        top_k: 40,
        top_p: 0.95,
        min_p: 0.05,
        max_tokens: -1,
        n_predict: -1,
        stream: false,
        chat_format: "Content-only",
        reasoning_format: "none",
        samplers: ["penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p", "min_p", "xtc", "temperature"],
      },
      n_ctx: window,
    },
    total_slots: 1,
    model_alias: id,
    model_ftype: "Q4_K - Medium",
    model_path: `/models/${id}.gguf`,
    modalities: { vision: false, video: false, audio: false },
    media_marker: "<__media_loopback__>",
    endpoint_slots: true,
    endpoint_props: false,
    endpoint_metrics: false,
    ui: true,
    ui_settings: {},
    chat_template: "",
    chat_template_caps: {
      supports_object_arguments: true,
      supports_parallel_tool_calls: true,
      supports_preserve_reasoning: false,
      supports_string_content: true,
      supports_system_role: true,
      supports_tool_calls: true,
      supports_tools: true,
      supports_typed_content: false,
    },
    bos_token: "<|endoftext|>",
    eos_token: "<|im_end|>",
    build_info: LLAMA_BUILD,
    is_sleeping: false,
    cors_proxy_enabled: false,
  };
}

/** The tool_choice strings llama-server takes; an object is taken too, and read as "auto" (grammar.json). */
const TOOL_CHOICES: ReadonlySet<string> = new Set(["auto", "none", "required"]);

/**
 * The request checks llama-server makes before a slot reads the request (refusals.json): a
 * tool_choice string it does not know, and both continuation flags at once. Undefined for a body
 * it takes.
 */
export function llamaCheck(body: Record<string, unknown>): ErrorAnswer | undefined {
  const choice = body.tool_choice;
  if (typeof choice === "string" && !TOOL_CHOICES.has(choice)) {
    return {
      status: 400,
      body: llamaError(400, `Invalid tool_choice: ${choice}`, "invalid_request_error"),
      source: "llama-server, recorded in test/fixtures/llama.cpp/refusals.json (unknownToolChoice)",
    };
  }
  if (body.continue_final_message === true && body.add_generation_prompt === true) {
    return {
      status: 400,
      body: llamaError(400, "Cannot set both add_generation_prompt and continue_final_message to true.", "invalid_request_error"),
      source: "llama-server, recorded in test/fixtures/llama.cpp/refusals.json (bothContinuationFlags)",
    };
  }
  return undefined;
}

/** What llama-server started with `--api-key` answers a request without the key, or with another one (auth.json). */
export const LLAMA_UNAUTHORIZED: ErrorAnswer = {
  status: 401,
  body: { error: { message: "Invalid API Key", type: "authentication_error", code: 401 } },
  source: "llama-server started with --api-key, recorded in test/fixtures/llama.cpp/auth.json",
};
