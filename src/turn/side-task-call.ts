/**
 * @module turn/side-task-call
 * {@link taskCall}: the settings an agent document gives a side task, turned into the endpoint,
 * model and options ask, askJson, summariser and preselect are called with.
 */

import { NO_KEY, normaliseBaseUrl, resolveApiKey } from "../wire/client.js";
import type { Endpoint, ResolvedTask } from "../shapes/config.js";
import type { AskJsonOptions, SummariserOptions } from "./side-task-types.js";
import { isPlainRecord } from "../text/guards.js";

/** Options of {@link taskCall}: the host's own defaults for a task that states none. */
export type TaskCallOptions = AskJsonOptions &
  SummariserOptions & {
    /** The model used when the task names none; the agent's endpoint model comes after it. */
    model?: string | undefined;
  };

/** What {@link taskCall} returns: the arguments a side task is called with. */
export interface TaskCall<O extends TaskCallOptions = TaskCallOptions> {
  /** The endpoint the side task is sent to, with the key it gets. */
  endpoint: Endpoint;
  /** The model the side task asks for. */
  model: string;
  /** The options to pass on: the host's, with what the task states laid over them. */
  options: Omit<O, "model">;
}

function stated(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

/** The fields of an endpoint a side task carries over: the server, its key and its timeouts. */
function endpointFields(endpoint: Endpoint & { model?: string }, apiKey: string | undefined, headers: boolean): Endpoint {
  const out: Endpoint = { baseUrl: endpoint.baseUrl };
  if (apiKey !== undefined) out.apiKey = apiKey;
  if (endpoint.requestTimeoutSeconds !== undefined) out.requestTimeoutSeconds = endpoint.requestTimeoutSeconds;
  if (endpoint.firstTokenSeconds !== undefined) out.firstTokenSeconds = endpoint.firstTokenSeconds;
  if (headers && endpoint.headers !== undefined) out.headers = endpoint.headers;
  return out;
}

/**
 * Turns a task's settings from an agent document into the endpoint, model and options a side task
 * is called with.
 *
 * What the task states wins over the same field in `options`, which are the host's defaults for a
 * task that states none; a field neither states is left out, so the side task's own default
 * applies (0.3, and a ceiling of 512 for ask, 1024 for the summariser, 256 for preselect), never
 * the agent's. `maxTokens: 0` is kept, and sends no ceiling. The task's extraBody is laid over the
 * host's one field at a time; the agent's own model extraBody is never involved. The model is the task's,
 * else `options.model`, else the endpoint's.
 *
 * `endpoint` is the agent's. A task on the same server (no baseUrl, or one that normalises to the
 * agent's) gets the agent's base URL exactly as the agent writes it, its headers and timeouts, and its key unless
 * it has its own, so both land on the same latch record. A task on another server gets only a key of
 * its own (as {@link resolveApiKey} decides; no key rather than the agent's), the agent's timeouts,
 * and no headers. Throws a TypeError where there is neither an endpoint nor a task baseUrl.
 *
 * @param task - The task as resolution handed it back; undefined for a task the document does not configure.
 * @param options - The host's defaults and the call's own options (signal, onNotice, name …).
 * @param endpoint - The agent's endpoint, with its model.
 * @example
 * ```ts
 * const title = taskCall(config.tasks.title, { signal, onNotice }, config);
 * const name = await ask(title.endpoint, title.model, "Name this chat.", firstMessage, title.options);
 * ```
 */
export function taskCall<O extends TaskCallOptions = TaskCallOptions>(
  task: ResolvedTask | undefined,
  options?: O,
  endpoint?: Endpoint & { model?: string },
): TaskCall<O> {
  const own: Partial<ResolvedTask> = isPlainRecord(task) ? task : {};
  const { model: hostModel, ...host } = (isPlainRecord(options) ? options : {}) as TaskCallOptions;
  const merged: Record<string, unknown> = { ...host };
  for (const field of ["maxTokens", "temperature", "reasoningEffort"] as const) {
    if (stated(own[field])) merged[field] = own[field];
  }
  const extraBody = { ...(isPlainRecord(host.extraBody) ? host.extraBody : {}), ...(isPlainRecord(own.extraBody) ? own.extraBody : {}) };
  if (Object.keys(extraBody).length > 0) merged.extraBody = extraBody;
  else delete merged.extraBody;

  const agent = isPlainRecord(endpoint) && nonEmpty(endpoint.baseUrl) !== undefined ? endpoint : undefined;
  const ownUrl = nonEmpty(own.baseUrl);
  const ownKey = nonEmpty(own.apiKey);
  let target: Endpoint;
  if (agent && (ownUrl === undefined || normaliseBaseUrl(ownUrl) === normaliseBaseUrl(agent.baseUrl))) {
    target = endpointFields(agent, ownKey ?? nonEmpty(agent.apiKey), true);
  } else if (ownUrl !== undefined) {
    const key = resolveApiKey({ baseUrl: ownUrl, apiKey: ownKey ?? "" }, { baseUrl: agent?.baseUrl ?? "" }, {});
    target = endpointFields({ ...(agent ?? {}), baseUrl: ownUrl }, key === NO_KEY ? undefined : key, false);
  } else {
    throw new TypeError("taskCall needs the agent's endpoint, or a task that names its own baseUrl.");
  }
  const model = nonEmpty(own.model) ?? nonEmpty(hostModel) ?? nonEmpty(agent?.model) ?? "";
  return { endpoint: target, model, options: merged as Omit<O, "model"> };
}
