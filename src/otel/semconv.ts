/**
 * @module otel/semconv
 * The OpenTelemetry semantic-convention names the otel entry writes, copied from
 * `@opentelemetry/semantic-conventions` under the names that package exports them by.
 *
 * The GenAI names live in the package's `incubating` entry, which its own README asks
 * instrumentation not to import at run time (it may break in a minor release) but to copy. The
 * copy is checked: `test/otel/semconv.test.ts` compares every constant here with the package's
 * export of the same name, so a rename upstream fails the suite instead of drifting silently.
 */

/** `gen_ai.operation.name`: what the span does (`chat`, `invoke_agent`, `execute_tool`). */
export const ATTR_GEN_AI_OPERATION_NAME = "gen_ai.operation.name";
/** `gen_ai.provider.name`: the provider flavour of the telemetry. */
export const ATTR_GEN_AI_PROVIDER_NAME = "gen_ai.provider.name";
/** `gen_ai.agent.name`: the agent's name, where the host gives one. */
export const ATTR_GEN_AI_AGENT_NAME = "gen_ai.agent.name";
/** `gen_ai.agent.id`: the agent's id, where the host gives one. */
export const ATTR_GEN_AI_AGENT_ID = "gen_ai.agent.id";
/** `gen_ai.conversation.id`: the session or thread the run belongs to, where the host gives one. */
export const ATTR_GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id";
/** `gen_ai.request.model`: the model the request asked for. */
export const ATTR_GEN_AI_REQUEST_MODEL = "gen_ai.request.model";
/** `gen_ai.request.max_tokens`: the reply ceiling the request carried. */
export const ATTR_GEN_AI_REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens";
/** `gen_ai.request.temperature`: the sampling temperature the request carried. */
export const ATTR_GEN_AI_REQUEST_TEMPERATURE = "gen_ai.request.temperature";
/** `gen_ai.request.top_p`: the nucleus-sampling share the request carried. */
export const ATTR_GEN_AI_REQUEST_TOP_P = "gen_ai.request.top_p";
/** `gen_ai.request.top_k`: the top-k the request carried. */
export const ATTR_GEN_AI_REQUEST_TOP_K = "gen_ai.request.top_k";
/** `gen_ai.request.seed`: the seed the request carried. */
export const ATTR_GEN_AI_REQUEST_SEED = "gen_ai.request.seed";
/** `gen_ai.request.frequency_penalty`: the frequency penalty the request carried. */
export const ATTR_GEN_AI_REQUEST_FREQUENCY_PENALTY = "gen_ai.request.frequency_penalty";
/** `gen_ai.request.presence_penalty`: the presence penalty the request carried. */
export const ATTR_GEN_AI_REQUEST_PRESENCE_PENALTY = "gen_ai.request.presence_penalty";
/** `gen_ai.request.stop_sequences`: the stop sequences the request carried. */
export const ATTR_GEN_AI_REQUEST_STOP_SEQUENCES = "gen_ai.request.stop_sequences";
/** `gen_ai.request.stream`: whether the request streamed. */
export const ATTR_GEN_AI_REQUEST_STREAM = "gen_ai.request.stream";
/** `gen_ai.response.finish_reasons`: the finish reasons the server sent. */
export const ATTR_GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons";
/** `gen_ai.response.time_to_first_chunk`: seconds from the request to the first chunk. */
export const ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK = "gen_ai.response.time_to_first_chunk";
/** `gen_ai.usage.input_tokens`: prompt tokens. */
export const ATTR_GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens";
/** `gen_ai.usage.output_tokens`: completion tokens. */
export const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens";
/** `gen_ai.usage.cache_read.input_tokens`: prompt tokens served from the cache. */
export const ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens";
/** `gen_ai.usage.reasoning.output_tokens`: completion tokens spent reasoning. */
export const ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS = "gen_ai.usage.reasoning.output_tokens";
/** `gen_ai.tool.name`: the tool a call ran. */
export const ATTR_GEN_AI_TOOL_NAME = "gen_ai.tool.name";
/** `gen_ai.tool.call.id`: the call's id, as the model gave it. */
export const ATTR_GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id";
/** `gen_ai.tool.type`: the kind of tool (`function` here). */
export const ATTR_GEN_AI_TOOL_TYPE = "gen_ai.tool.type";
/** `gen_ai.tool.call.arguments`: the call's arguments; content, so opt-in. */
export const ATTR_GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments";
/** `gen_ai.tool.call.result`: what the tool answered; content, so opt-in. */
export const ATTR_GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result";
/** `gen_ai.input.messages`: the messages a request sent; content, so opt-in. */
export const ATTR_GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages";
/** `gen_ai.output.messages`: what the model answered; content, so opt-in. */
export const ATTR_GEN_AI_OUTPUT_MESSAGES = "gen_ai.output.messages";
/** `gen_ai.system_instructions`: the system prompt a request sent; content, so opt-in. */
export const ATTR_GEN_AI_SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions";
/** `gen_ai.token.type`: which tokens a token-usage point counts (`input` or `output`). */
export const ATTR_GEN_AI_TOKEN_TYPE = "gen_ai.token.type";

/** The `chat` operation: one request to the model. */
export const GEN_AI_OPERATION_NAME_VALUE_CHAT = "chat";
/** The `invoke_agent` operation: one run. */
export const GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT = "invoke_agent";
/** The `execute_tool` operation: one tool call. */
export const GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL = "execute_tool";
/** The `openai` provider: the API an OpenAI-compatible endpoint speaks. */
export const GEN_AI_PROVIDER_NAME_VALUE_OPENAI = "openai";
/** The `input` token type. */
export const GEN_AI_TOKEN_TYPE_VALUE_INPUT = "input";
/** The `output` token type. */
export const GEN_AI_TOKEN_TYPE_VALUE_OUTPUT = "output";

/** `gen_ai.client.token.usage`: the histogram of tokens per request, by token type. */
export const METRIC_GEN_AI_CLIENT_TOKEN_USAGE = "gen_ai.client.token.usage";
/** `gen_ai.client.operation.duration`: the histogram of seconds per operation. */
export const METRIC_GEN_AI_CLIENT_OPERATION_DURATION = "gen_ai.client.operation.duration";

/** `server.address`: the endpoint's host (a stable convention). */
export const ATTR_SERVER_ADDRESS = "server.address";
/** `server.port`: the endpoint's port (a stable convention). */
export const ATTR_SERVER_PORT = "server.port";
/** `error.type`: what kind of failure ended the operation (a stable convention). */
export const ATTR_ERROR_TYPE = "error.type";
/** `_OTHER`: the error type for a failure with no name of its own (a stable convention). */
export const ERROR_TYPE_VALUE_OTHER = "_OTHER";
