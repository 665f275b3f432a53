/**
 * @module run/agent-loop/run
 * One run as its steps share it: the settings, the transcript and what the run has gathered so
 * far, the endpoint it talks to, and the three ways a step reports — an event, a notice, a
 * message appended to the transcript.
 */

import type OpenAI from "openai";
import type { Message, Turn } from "../../shapes/config.js";
import type { RunEvent, RunEventInput } from "../../shapes/event-types.js";
import type { FailedRun } from "../../text/errors.js";
import type { ToolCallOutcome } from "../../text/tool-calls.js";
import { quietly } from "../../text/safe-calls.js";
import { charsPerTokenForIn } from "../../wire/calibration.js";
import { capabilitiesForIn, type EndpointCapabilities } from "../../wire/capabilities.js";
import { getClientIn } from "../../wire/client.js";
import type { RuntimeState } from "../../state/state.js";
import { rebaseLedger } from "../ledger.js";
import { createArgumentChecker, type ArgumentChecker } from "../argument-validation.js";
import type { RunState } from "../run-state.js";
import type { AgentLoopConfig, AgentLoopOptions } from "./options.js";
import { resolveSettings, type LoopSettings } from "./settings.js";
import { createRunTools, type RunTools } from "./tools.js";
import { createUsageAccount, type UsageAccount } from "./usage.js";

/** A run in progress, as every step reads and extends it. */
export interface LoopRun {
  readonly state: RuntimeState;
  /** The options as the host gave them, for the data and the callbacks. */
  readonly options: AgentLoopOptions;
  /** The endpoint and model settings, handed to buildBody and the client whole. */
  readonly config: AgentLoopConfig;
  /** Everything else the run reads off its options and config, resolved once. */
  readonly settings: LoopSettings;
  readonly tools: RunTools;
  readonly account: UsageAccount;
  /** When the run started, on the run's clock: what `metrics.durationMs` counts from. */
  readonly startedAt: number;
  /** Checks each call's arguments against its tool's schema; absent with `validateArguments: false`. */
  readonly checker: ArgumentChecker | undefined;
  /** The events the run's metrics are added up from: every one but the streamed text. */
  readonly events: RunEvent[];
  /** The transcript passed in plus what the run appended; replaced whole when it is rewritten. */
  transcript: Message[];
  /** The question: the last user message passed in. */
  readonly question: Message | undefined;
  /** Every call the model made, with its outcome. */
  readonly toolCalls: ToolCallOutcome[];
  /** The tools dispatched, in the order first used. */
  readonly used: string[];
  /** The shortlist the run opened with. */
  shortlist: string[];
  /** The hook context put on the question, and the preface said above it. */
  context: string;
  preface: string;
  /** The last turn, as the run saw it. */
  lastTurn: Turn | undefined;
  /** Whether the run has said that it cannot fold without a compaction task. */
  compactionWarned: boolean;
  /** The tools the run has said go with strict off, so each is said once however many requests follow. */
  readonly strictOffSaid: Set<string>;
  /** What the run learned of the window the server serves. */
  readonly served: ServedWindowState;
  /** Records an event for the run's metrics (streamed text aside) and hands it to the host's onEvent. */
  onEvent(event: RunEventInput): void;
  /** Says a sentence as a notice event and to the host's onNotice. */
  onNotice(text: string): void;
  /** Appends a message to the transcript and hands it to the host's onMessage, awaited. */
  tell(message: Message, step: number, turn?: Turn): Promise<void>;
  /** The run as it stands, for an error to carry. */
  snapshot(): FailedRun;
}

/** What a run learned of the window its server serves, beside the configured one. */
export interface ServedWindowState {
  /** Whether the run has said that the server's list of loaded models could not be read. */
  unreadableSaid: boolean;
  /** The last step whose prompt the server cut to its window, where one was. */
  cutStep?: number;
  /** The last prompt count came from a cut prompt, so the next fold is planned on the estimate, not on it. */
  countCut: boolean;
}

/** The endpoint a run talks to: the client, the endpoint's record and the model's calibration. */
export interface LoopEndpoint {
  readonly client: OpenAI;
  readonly supports: EndpointCapabilities;
  /** The model's calibrated characters per token, read fresh each time. */
  charsPerToken(): number;
}

function lastUserIndex(messages: readonly Message[]): number {
  for (let index = messages.length - 1; index >= 0; index -= 1) if (messages[index]?.role === "user") return index;
  return -1;
}

/** Where the question stands in the transcript now; the last user message where it has gone. */
export function questionIndex(run: LoopRun): number {
  const at = run.question === undefined ? -1 : run.transcript.indexOf(run.question);
  return at >= 0 ? at : lastUserIndex(run.transcript);
}

/** A message's text: its string content, or its text parts joined. */
export function textOf(message: Message | undefined): string {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (part && part.type === "text" ? part.text : "")).join("");
}

/**
 * Opens a run: reads its options defensively, so even a call with nothing valid in it goes on
 * to fail as an AgentLoopError, and resolves its settings. A resumed run opens from its saved
 * state instead of its options' messages, ledger and loads: the transcript, the question, what
 * it loaded and used, its shortlist, hook context and accounting as they stood. Never throws.
 * @internal
 */
export function openRun(state: RuntimeState, given: AgentLoopOptions, saved?: RunState): LoopRun {
  const options = (given && typeof given === "object" ? given : {}) as AgentLoopOptions;
  const config = (options.config && typeof options.config === "object" ? options.config : {}) as AgentLoopConfig;
  const settings = resolveSettings(options, config);
  const transcript: Message[] = saved ? saved.messages.slice() : Array.isArray(options.messages) ? options.messages.slice() : [];
  const account = saved
    ? createUsageAccount(saved.ledger, { totals: saved.usage, ...(saved.budget.used !== undefined ? { used: saved.budget.used } : {}), ...saved.cache })
    : createUsageAccount(options.ledger);
  const run: LoopRun = {
    state,
    options,
    config,
    settings,
    tools: createRunTools(settings.toolDiscovery, settings.system, options.tools, options.catalog, options.loaded, saved?.tools),
    account,
    startedAt: settings.now(),
    checker: settings.validateArguments ? createArgumentChecker(state, (text) => run.onNotice(text)) : undefined,
    events: [],
    transcript,
    question: saved ? (saved.question >= 0 ? transcript[saved.question] : undefined) : transcript[lastUserIndex(transcript)],
    toolCalls: saved ? saved.toolCalls.slice() : [],
    used: saved ? saved.used.slice() : [],
    shortlist: saved ? saved.shortlist.slice() : [],
    context: saved?.hooks.context ?? "",
    preface: saved?.hooks.preface ?? "",
    lastTurn: saved?.turn,
    compactionWarned: saved?.compactionWarned ?? false,
    strictOffSaid: new Set(),
    served: { unreadableSaid: false, countCut: false },
    onEvent(event) {
      if (event.kind !== "output" && event.kind !== "thinking") run.events.push({ ...event, seq: run.events.length + 1, at: settings.now() });
      quietly(options.onEvent, event);
    },
    onNotice(text) {
      run.onEvent({ kind: "notice", text });
      quietly(options.onNotice, text);
    },
    async tell(message, step, turn) {
      run.transcript.push(message);
      if (options.onMessage) await options.onMessage(message, step, turn);
    },
    snapshot() {
      return {
        messages: run.transcript.slice(),
        usage: { ...run.account.totals },
        toolCalls: run.toolCalls.slice(),
        loaded: run.tools.carried(),
        used: run.used.slice(),
        preselected: run.shortlist.slice(),
        ledger: run.account.ledger.slice(),
      };
    },
  };
  return run;
}

/** Finds the run's client and the endpoint's record; the client may be the host's own. */
export function connect(run: LoopRun): LoopEndpoint {
  const { state, config } = run;
  const client = run.options.client ?? getClientIn(state, config);
  const supports = capabilitiesForIn(state, config.baseUrl, config.apiKey);
  return { client, supports, charsPerToken: () => charsPerTokenForIn(state, supports, config.model) };
}

/** Puts a rewritten transcript in place, moving the ledger onto it. */
export function replaceTranscript(run: LoopRun, next: readonly Message[]): void {
  run.account.replaceLedger(rebaseLedger(run.account.ledger, run.transcript, next));
  run.transcript = next.slice();
}
