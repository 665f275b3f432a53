/**
 * @module run/agent-loop/side-tasks
 * The side tasks runAgentLoop makes when asked — the preselection for `preselect: true` and the
 * summary for `compact: true` — built from the agent's tasks with taskCall, unless the host
 * injected its own functions.
 */

import type { Summariser } from "../compaction.js";
import type { Endpoint, ModelParams, ResolvedTask } from "../../shapes/config.js";
import { preselectIn } from "../preselect.js";
import { summariserIn, taskCall, type TaskCallOptions } from "../../turn/side-task.js";
import type { PreselectTools } from "./preselection.js";
import type { RuntimeState } from "../../state/state.js";
import type { UsageMemory } from "../usage-memory.js";

/**
 * The preselection the loop makes by default: preselect on the task's endpoint, asking the model
 * every time unless the run opted into keywords first, and reading the usage memory when given.
 */
export function defaultPreselect(state: RuntimeState, memory?: UsageMemory): PreselectTools {
  return ({ config, model, task, catalog, prompt, signal, onNotice, keywords }) => {
    const call = taskCall<TaskCallOptions>(task, { model, onNotice, ...(signal ? { signal } : {}) }, config);
    const { temperature, maxTokens, reasoningEffort, extraBody } = call.options;
    return preselectIn(state, call.endpoint, call.model, catalog, prompt, {
      keywords: keywords === true || (typeof keywords === "object" && keywords !== null) ? keywords : false,
      ...(memory ? { memory } : {}),
      onNotice,
      ...(signal ? { signal } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      ...(maxTokens !== undefined ? { maxTokens } : {}),
      ...(reasoningEffort !== undefined ? { reasoningEffort } : {}),
      ...(extraBody !== undefined ? { extraBody } : {}),
    });
  };
}

/**
 * The summariser the loop folds with by default: tasks.compaction's, and none without it — the
 * main model is never asked to summarise behind the host's back.
 */
export function defaultSummariser(
  state: RuntimeState,
  config: Endpoint & ModelParams,
  task: ResolvedTask | undefined,
  onNotice: (text: string) => void,
): Summariser | undefined {
  if (!task || typeof task !== "object") return undefined;
  const call = taskCall(task, { onNotice }, config);
  if (!call.model) return undefined;
  return summariserIn(state, call.endpoint, call.model, call.options);
}
