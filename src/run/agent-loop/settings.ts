/**
 * @module run/agent-loop/settings
 * A run's settings, read once off its options and config: each value under the name its public
 * option gives it, every default applied in one place, handed down whole to the steps.
 *
 * Where a function below the loop documents another name for the same value (runTurn's
 * `contextLimit`, planCompaction's `limit`, runCalls' `dedupe`), the step that calls it converts
 * once, at that call, and says so.
 */

import type { ToolCallRequest } from "../../text/tool-calls.js";
import type { ToolOrder } from "../../wire/request-body.js";
import type { ApprovePolicy } from "../approval.js";
import type { HookEventName } from "../hooks.js";
import { DEFAULT_MAX_TOOL_ITERATIONS } from "../../shapes/limits.js";
import { nonNegativeNumber, positiveNumber } from "../../text/guards.js";
import type { AgentLoopConfig, AgentLoopHooks, AgentLoopOptions } from "./options.js";
import type { ToolDiscovery } from "./tools.js";

/** The hooks of a run that has some: a runner that is a function, and the events to gather. */
export interface LoopHooks extends AgentLoopHooks {
  /** The events gathered before the first request. @default ["beforeTurn"] */
  events: readonly HookEventName[];
}

/**
 * Everything a run reads off its options and config besides the data and the callbacks, each
 * value checked and defaulted once.
 *
 * The endpoint and model settings a request is built from (`baseUrl`, `model`, `maxTokens`,
 * `requestTimeoutSeconds` …) stay on the config, which is handed to buildBody and the client
 * whole.
 */
export interface LoopSettings {
  /** How the run declares its tools: `config.toolDiscovery`. @default "eager" */
  toolDiscovery: ToolDiscovery;
  /**
   * The most tool-calling steps: `config.maxToolIterations`, a whole number of at least one;
   * absent is {@link DEFAULT_MAX_TOOL_ITERATIONS}, as a resolved agent document has it (a value below 1 is refused before the run opens).
   * @default 20
   */
  maxToolIterations: number;
  /** The window in tokens: `config.contextLength`; absent weighs no request and plans no fold. */
  contextLength?: number | undefined;
  /** Re-sends for a transient failure: `config.maxRetries`; absent is runTurn's. */
  maxRetries?: number | undefined;
  /** The loading wait in seconds: `config.loadingTimeoutSeconds`, 0 meaning none; absent or unreadable is runTurn's. */
  loadingTimeoutSeconds?: number | undefined;
  /** The system prompt. @default "" */
  system: string;
  /** Whether a shortlist gets a first step of its own or is loaded like any load. @default "exclusive" */
  preselectRouting: "exclusive" | "append";
  /** Run a step's calls together. @default false */
  parallel: boolean;
  /** Make an identical call once per step; a predicate is asked per call. @default true */
  dedupeToolCalls: boolean | ((request: ToolCallRequest) => boolean);
  /** How requests order their tools. @default true (name order) */
  toolOrder: ToolOrder;
  /** Look for calls written into a reply as text. @default true */
  recoverToolCalls: boolean;
  /** Continuations to try for an answer cut off at maxTokens, a whole number. @default 0 */
  maxContinuations: number;
  /** Make the preselection with tasks.toolSelect or toolSelectModel. @default false */
  preselect: boolean;
  /** Fold the transcript once the window is filling. @default false */
  compact: boolean;
  /** Asked of each call whether it runs, is denied or waits for a person; absent runs every call. */
  approve?: ApprovePolicy | undefined;
  /** Check each call's arguments against its tool's JSON Schema before it runs. @default true */
  validateArguments: boolean;
  /** The hooks, where the run has a runner; absent runs none. */
  hooks?: LoopHooks | undefined;
  /**
   * The run's clock, in epoch milliseconds: it stamps each event's `at`, times each tool call
   * and measures each step's loading wait. A turn's own timings (`firstTokenMs`, `durationMs`)
   * are the stream's, taken on its monotonic clock, which this does not replace.
   * @default Date.now
   */
  now: () => number;
  /** Waits between a step's attempts; absent is runTurn's timer. */
  sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
}

/** The defaults of {@link LoopSettings}, in one place. */
export const LOOP_DEFAULTS = Object.freeze({
  toolDiscovery: "eager",
  maxToolIterations: DEFAULT_MAX_TOOL_ITERATIONS,
  system: "",
  preselectRouting: "exclusive",
  parallel: false,
  dedupeToolCalls: true,
  toolOrder: true,
  recoverToolCalls: true,
  maxContinuations: 0,
  preselect: false,
  compact: false,
  validateArguments: true,
  now: Date.now,
} as const) satisfies Partial<LoopSettings>;

/** The hook events gathered where the hooks name none. */
const DEFAULT_HOOK_EVENTS: readonly HookEventName[] = Object.freeze(["beforeTurn"]);

/** The fields of an object that hold a value, so a spread of it never writes `undefined` over a default. */
function present<T extends object>(fields: T): { [Key in keyof T]?: Exclude<T[Key], undefined> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as { [Key in keyof T]?: Exclude<T[Key], undefined> };
}

function readHooks(hooks: AgentLoopHooks | undefined): LoopHooks | undefined {
  if (!hooks || typeof hooks !== "object" || typeof hooks.run !== "function") return undefined;
  const events = Array.isArray(hooks.events) && hooks.events.length > 0 ? hooks.events : DEFAULT_HOOK_EVENTS;
  return { ...hooks, events };
}

/**
 * Reads a run's settings off its options and config, each value checked, anything absent or
 * unreadable taking its default. @internal
 */
export function resolveSettings(options: AgentLoopOptions, config: AgentLoopConfig): LoopSettings {
  const iterations = positiveNumber(config.maxToolIterations);
  const continuations = positiveNumber(options.maxContinuations);
  const given = present({
    toolDiscovery: config.toolDiscovery === "ondemand" || config.toolDiscovery === "proxy" ? config.toolDiscovery : undefined,
    maxToolIterations: iterations === undefined ? undefined : Math.max(1, Math.floor(iterations)),
    contextLength: positiveNumber(config.contextLength),
    maxRetries: config.maxRetries,
    // 0 is a value (no wait), as runTurn reads it; only absent or unreadable takes runTurn's default.
    loadingTimeoutSeconds: nonNegativeNumber(config.loadingTimeoutSeconds),
    system: typeof options.system === "string" ? options.system : undefined,
    preselectRouting: options.preselectRouting === "append" ? "append" : undefined,
    parallel: options.parallel === true ? true : undefined,
    // As runCalls reads it: a predicate is asked, false turns it off, anything else is on.
    dedupeToolCalls: typeof options.dedupeToolCalls === "function" ? options.dedupeToolCalls : options.dedupeToolCalls === false ? false : undefined,
    toolOrder: options.toolOrder,
    recoverToolCalls: options.recoverToolCalls === false ? false : undefined,
    maxContinuations: continuations === undefined ? undefined : Math.floor(continuations),
    preselect: options.preselect === true ? true : undefined,
    compact: options.compact ? true : undefined,
    approve: typeof options.approve === "function" ? options.approve : undefined,
    validateArguments: options.validateArguments === false ? false : undefined,
    hooks: readHooks(options.hooks),
    now: typeof options.now === "function" ? options.now : undefined,
    sleep: typeof options.sleep === "function" ? options.sleep : undefined,
  } satisfies { [Key in keyof Required<LoopSettings>]: LoopSettings[Key] | undefined });
  return { ...LOOP_DEFAULTS, ...given } satisfies LoopSettings;
}
