/**
 * @module run/agent-loop/preselection
 * Where a run's shortlist comes from — the host's own, or a preselect call the loop makes — and
 * how it is written into a proxied run's transcript.
 */

import type { CatalogServer } from "../../shapes/catalog.js";
import type { AssistantMessage, Endpoint, ModelParams, ResolvedTask, ToolMessage } from "../../shapes/config.js";
import { errorMessage } from "../../text/errors.js";
import { LOAD_TOOLS_NAME } from "../tool-loading.js";
import type { KeywordThresholds } from "../preselect.js";

/** What the loop hands the function that makes its preselection. */
export interface PreselectRequest {
  /** The agent's endpoint and model settings, for a task that states no endpoint of its own. */
  config: Endpoint & ModelParams;
  /** The small model to ask: tasks.toolSelect's, else toolSelectModel. */
  model: string;
  /** tasks.toolSelect as the agent states it, where it does. */
  task?: ResolvedTask | undefined;
  /** The catalogue, held to the tools the run can reach. */
  catalog: CatalogServer[];
  /** The question's text. */
  prompt: string;
  /** The run's signal. */
  signal?: AbortSignal | undefined;
  /** Says a sentence as a notice of the run. */
  onNotice: (text: string) => void;
  /** The run's `preselectKeywords`: match keywords first, asking the model only where they are not confident. @default false */
  keywords?: boolean | KeywordThresholds | undefined;
}

/** Makes the preselection runAgentLoop's `preselect: true` asks for. */
export type PreselectTools = (request: PreselectRequest) => Promise<readonly string[]> | readonly string[];

/** Keeps the names the run can reach, each once, in the order given. */
export function holdShortlist(names: unknown, reachable: (name: string) => boolean): string[] {
  if (!Array.isArray(names)) return [];
  const kept: string[] = [];
  for (const name of names) {
    if (typeof name === "string" && reachable(name) && !kept.includes(name)) kept.push(name);
  }
  return kept;
}

/** Asks the injected function for a shortlist; a failure is a notice and no shortlist. */
export async function askShortlist(preselect: PreselectTools, request: PreselectRequest): Promise<unknown> {
  try {
    return await preselect(request);
  } catch (error) {
    if (request.signal?.aborted) throw error;
    request.onNotice(`Preselecting tools failed (${errorMessage(error)}); the run starts with no shortlist.`);
    return [];
  }
}

/**
 * Writes a proxied preselection as the load_tools call the model did not make and its result;
 * the id is numbered by where the call lands in the transcript.
 */
export function shortlistExchange(names: readonly string[], at: number, content: string): [AssistantMessage, ToolMessage] {
  const id = `call_preselected_${at}`;
  return [
    { role: "assistant", content: "", tool_calls: [{ id, type: "function", function: { name: LOAD_TOOLS_NAME, arguments: JSON.stringify({ names }) } }] },
    { role: "tool", tool_call_id: id, content },
  ];
}
