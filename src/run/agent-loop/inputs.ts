/**
 * @module run/agent-loop/inputs
 * The checks a run's options pass before anything is sent: what cannot work is refused with a
 * TypeError naming the field and what was given, and a failure to reach the endpoint is said
 * in terms of `config.baseUrl`.
 */

import type { ToolDefinition } from "../../shapes/config.js";
import { TOOL_NAME_PATTERN } from "../../shapes/limits.js";
import { checkMessages } from "../../text/message-check.js";
import { checkBaseUrl, quoteGiven } from "../../wire/client.js";
import type { AgentLoopConfig, AgentLoopOptions } from "./options.js";

/** What a tool at an index of `tools` lacks or gets wrong, or undefined where it can be declared. */
function toolProblem(tool: unknown): string | undefined {
  if (!tool || typeof tool !== "object") return `is ${quoteGiven(tool)}, not a tool definition ({ type: "function", function: { name, parameters } })`;
  const fn = (tool as Partial<ToolDefinition>).function;
  if (!fn || typeof fn !== "object") return `has no \`function\` ({ type: "function", function: { name, parameters } }); given ${quoteGiven(fn)}`;
  if (typeof fn.name !== "string" || !TOOL_NAME_PATTERN.test(fn.name)) {
    return `has the name ${quoteGiven(fn.name)}, which an OpenAI-compatible server refuses: letters, digits, _ and - only, 1 to 64 of them`;
  }
  return undefined;
}

/** The options that take one of a few words, each with the words it takes. */
const CHOICES = {
  "config.toolDiscovery": ["eager", "ondemand", "proxy"],
  preselectRouting: ["exclusive", "append"],
} as const satisfies Record<string, readonly string[]>;

function checkChoice(field: keyof typeof CHOICES, value: unknown): void {
  const allowed: readonly string[] = CHOICES[field];
  if (value !== undefined && (typeof value !== "string" || !allowed.includes(value)))
    throw new TypeError(`${field} must be one of ${allowed.map((word) => `"${word}"`).join(", ")}; given ${quoteGiven(value)}.`);
}

/** The settings with a fixed set of values or a floor: what is given must be one of them, absent takes the default. */
function checkChoices(options: AgentLoopOptions, config: AgentLoopConfig): void {
  checkChoice("config.toolDiscovery", config.toolDiscovery);
  checkChoice("preselectRouting", (options as { preselectRouting?: unknown }).preselectRouting);
  const iterations: unknown = config.maxToolIterations;
  if (iterations !== undefined && (typeof iterations !== "number" || !Number.isFinite(iterations) || iterations < 1))
    throw new TypeError(`config.maxToolIterations must be a whole number of at least 1 (absent allows 20); given ${quoteGiven(iterations)}.`);
}

/**
 * Checks a run's options before it opens: the config with a model (and, without a client of the
 * host's own, a base URL that can be sent to), the transcript as a non-empty array of messages
 * with known roles, the settings that take one of a few words (`toolDiscovery`,
 * `preselectRouting`) or a floor (`maxToolIterations` of at least 1), each tool declarable under
 * a name a server takes, and a dispatch function where there are tools. A resumed run
 * skips the transcript, which its saved state carries.
 *
 * @throws TypeError naming the field and what was given.
 * @internal
 */
export function checkLoopInput(options: AgentLoopOptions, resumed = false): void {
  if (!options || typeof options !== "object")
    throw new TypeError(`runAgentLoop needs an options object ({ config, messages, tools, dispatch }); given ${quoteGiven(options)}.`);
  const config = options.config as unknown;
  if (!config || typeof config !== "object") throw new TypeError(`config must be an object with baseUrl and model; given ${quoteGiven(config)}.`);
  const { model, baseUrl } = config as { model?: unknown; baseUrl?: unknown };
  if (options.client === undefined) checkBaseUrl(baseUrl);
  if (typeof model !== "string" || model.trim() === "")
    throw new TypeError(`config.model must name the model to ask, a non-empty string; given ${quoteGiven(model)}.`);
  if (!resumed) checkMessages(options.messages, "messages");
  checkChoices(options, config as AgentLoopConfig);
  const tools = options.tools as unknown;
  if (tools !== undefined && !Array.isArray(tools)) throw new TypeError(`tools must be an array of tool definitions; given ${quoteGiven(tools)}.`);
  (tools ?? []).forEach((tool: unknown, index: number) => {
    const problem = toolProblem(tool);
    if (problem) throw new TypeError(`tools[${index}] ${problem}.`);
  });
  if (Array.isArray(tools) && tools.length > 0 && typeof options.dispatch !== "function") {
    throw new TypeError(`dispatch must be a function that runs the model's tool calls, since tools are given; given ${quoteGiven(options.dispatch)}.`);
  }
}

/** The network error codes that say the endpoint could not be reached at all. */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ECONNRESET",
  "ERR_INVALID_URL",
]);

/** A network error code or a fetch refusal (`bad port`) down an error's cause chain, if any. */
function unreachableReason(error: unknown): string | undefined {
  try {
    let current: unknown = error;
    for (let depth = 0; depth < 8 && current && typeof current === "object"; depth += 1) {
      const { code, message } = current as { code?: unknown; message?: unknown };
      if (typeof code === "string" && UNREACHABLE_CODES.has(code)) return code;
      if (typeof message === "string" && message === "bad port") return "bad port: fetch refuses to connect to this port";
      current = (current as { cause?: unknown }).cause;
    }
  } catch {
    // An error whose fields throw on reading says nothing of the network.
  }
  return undefined;
}

/**
 * What a run's failure says where the endpoint could not be reached: an error naming
 * `config.baseUrl`, the URL and the reason, with what was caught as its cause; anything else as
 * it was caught.
 * @internal
 */
export function explainUnreachable(options: AgentLoopOptions, caught: unknown): unknown {
  if (options?.client !== undefined) return caught;
  const named = caught instanceof Error && caught.name === "APIConnectionError";
  const reason = unreachableReason(caught);
  if (!named && reason === undefined) return caught;
  const baseUrl = (options?.config as { baseUrl?: unknown } | undefined)?.baseUrl;
  const said = caught instanceof Error ? caught.message : String(caught);
  return new Error(`Could not reach config.baseUrl ${quoteGiven(baseUrl)}: ${said}${reason ? ` (${reason})` : ""}.`, { cause: caught });
}
