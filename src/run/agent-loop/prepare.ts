/**
 * @module run/agent-loop/prepare
 * What a run does before its first request: gathers the hooks and chooses the shortlist side by
 * side, then opens with the shortlist the way its routing and discovery mode say.
 */

import { gatherIn } from "../hooks.js";
import { PRESELECTED_NOTICE } from "../preselect.js";
import { quietly } from "../../text/safe-calls.js";
import { preview } from "../run-calls.js";
import { askShortlist, holdShortlist, shortlistExchange } from "./preselection.js";
import { textOf, type LoopRun } from "./run.js";
import { defaultPreselect } from "./side-tasks.js";

/**
 * Gathers the hooks and the shortlist, puts them on the run, and says whether the first step
 * is the shortlist's alone (exclusive routing, outside proxy mode). @internal
 */
export async function prepare(run: LoopRun): Promise<boolean> {
  const prompt = textOf(run.question);
  const [gathered, picked] = await Promise.all([gatherHooks(run, prompt), chooseShortlist(run, prompt)]);
  run.context = gathered.context;
  run.preface = gathered.preface;
  return openShortlist(run, picked);
}

async function gatherHooks(run: LoopRun, prompt: string): Promise<{ context: string; preface: string }> {
  const hooks = run.settings.hooks;
  if (!hooks) return { context: "", preface: "" };
  const signal = run.options.signal;
  // gather's option for the notifier is onNote.
  const gathered = await gatherIn(
    run.state,
    hooks.run,
    hooks.events,
    { prompt, ...(hooks.context ?? {}) },
    {
      ...(hooks.maxTokens !== undefined ? { maxTokens: hooks.maxTokens } : {}),
      ...(signal ? { signal } : {}),
      onNote: run.onNotice,
    },
  );
  return { context: gathered.context, preface: typeof hooks.preface === "string" ? hooks.preface : gathered.preface };
}

/** The shortlist as picked: the host's own, or what the preselect side task answers; not yet checked. */
async function chooseShortlist(run: LoopRun, prompt: string): Promise<unknown> {
  const { options, config } = run;
  if (Array.isArray(options.preselected)) return options.preselected;
  if (!run.settings.preselect) return [];
  const task = config.tasks?.toolSelect;
  const model = typeof task?.model === "string" && task.model !== "" ? task.model : (config.toolSelectModel ?? "");
  if (model === "") return [];
  const preselect = options.sideTasks?.preselect ?? defaultPreselect(run.state, options.usageMemory);
  return askShortlist(preselect, {
    config,
    model,
    ...(task ? { task } : {}),
    catalog: run.tools.catalog,
    prompt,
    ...(options.signal ? { signal: options.signal } : {}),
    onNotice: run.onNotice,
    ...(options.preselectKeywords !== undefined && options.preselectKeywords !== false ? { keywords: options.preselectKeywords } : {}),
  });
}

/** Keeps the reachable names, says them, and loads or writes them as the mode routes them. */
async function openShortlist(run: LoopRun, picked: unknown): Promise<boolean> {
  const { tools } = run;
  const mode = tools.mode;
  run.shortlist = holdShortlist(picked, (name) => tools.definitions.has(name) && (mode === "eager" || tools.loadable.includes(name)));
  if (run.shortlist.length === 0) return false;
  run.onNotice(`${PRESELECTED_NOTICE} ${run.shortlist.join(", ")}`);
  const routing = run.settings.preselectRouting;
  if (mode === "ondemand" && routing === "append") tools.loadShortlist(run.shortlist);
  if (mode === "proxy") await writeProxyShortlist(run);
  return routing === "exclusive" && mode !== "proxy";
}

/** Writes a proxied shortlist into the transcript as the load_tools call the model did not make, and its result. */
async function writeProxyShortlist(run: LoopRun): Promise<void> {
  const { shortlist, tools, options } = run;
  const [call, result] = shortlistExchange(shortlist, run.transcript.length, tools.proxyShortlist(shortlist, run.transcript));
  const request = {
    id: result.tool_call_id,
    name: call.tool_calls![0]!.function.name,
    args: { names: shortlist },
    raw: call.tool_calls![0]!.function.arguments,
  };
  quietly(options.onToolCall, request);
  run.onEvent({ kind: "tool-call", id: request.id, name: request.name, args: preview(request.args) });
  const content = result.content as string;
  quietly(options.onToolResult, { id: request.id, name: request.name, ok: true, content });
  run.onEvent({ kind: "tool-result", id: request.id, name: request.name, ok: true, content: preview(content) });
  run.toolCalls.push({ id: request.id, name: request.name, args: request.args, ok: true, content });
  tools.endStep();
  await run.tell(call, 0);
  await run.tell(result, 0);
}
