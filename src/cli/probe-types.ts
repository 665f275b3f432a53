/**
 * @module cli/probe-types
 * The shapes of `agent-core probe`: its options, the rows of its table and the report it returns.
 */
import type { CapabilitiesSnapshot } from "../index.js";
import type { Runtime } from "../runtime.js";

/** How a capability came out of the probe. */
export type ProbeStatus = "supported" | "refused" | "ignored" | "as text" | "not called" | "unknown";

/** The capabilities the probe reports on, in the order it reports them. */
export type ProbeCapability =
  "window" | "usageInStream" | "maxTokens" | "temperature" | "reasoningEffort" | "grammar" | "strictSchemas" | "toolCalls" | "jsonSchema" | "prefill";

/** One row of the probe's table. */
export interface ProbeFinding {
  /** Which capability. */
  capability: ProbeCapability;
  /** The capability in words. */
  label: string;
  /** How it came out. */
  status: ProbeStatus;
  /** What was found, in a short phrase. */
  detail: string;
  /** The server's own words, where it refused. */
  words?: string | undefined;
}

/** One HTTP request the probe sent, as the connection pool saw it. */
export interface ProbeRequest {
  method: string;
  path: string;
  /** The response status; absent where none came. */
  status?: number | undefined;
}

/** Everything the probe found. */
export interface ProbeReport {
  /** The base URL probed. */
  baseUrl: string;
  /** The model probed. */
  model: string;
  /** Whether the endpoint's listing named the model. */
  listed: boolean;
  /** The served window in tokens (0 where nothing said) and where it came from. */
  window: { tokens: number; source: string };
  /** The rows of the table, window first; every row but the window's is read off the same records the snapshot is written from. */
  findings: ProbeFinding[];
  /** Every request sent, in order. */
  requests: ProbeRequest[];
  /** Tokens the chat requests cost as the endpoint reported them; `unreported` counts answers that carried no usage. */
  tokens: { prompt: number; completion: number; unreported: number };
  /** The latches learned, as importCapabilities loads them. */
  snapshot: CapabilitiesSnapshot;
}

/** Options of probeEndpoint. */
export interface ProbeOptions {
  /** The endpoint's base URL. */
  baseUrl: string;
  /** The key; absent sends none. */
  apiKey?: string | undefined;
  /** Headers sent with every request of the probe (a router's routing header, say); never printed. */
  headers?: Record<string, string> | undefined;
  /** The model; absent takes the first one the endpoint lists. */
  model?: string | undefined;
  /** The runtime the latches are learned in. @default a fresh one from createRuntime(), reset when the probe ends */
  runtime?: Runtime | undefined;
  /**
   * The key salt a fresh runtime fingerprints the key with, so the snapshot's keyed entry matches
   * in a host given the same `keySalt`; unused with `runtime`.
   * @default a random one, which no other process shares
   */
  keySalt?: string | undefined;
  /** Stops the probe. */
  signal?: AbortSignal | undefined;
  /** Told one line as each probe starts. */
  onProgress?: ((line: string) => void) | undefined;
  /** How long any one request may stay silent, in seconds. @default 60 */
  timeoutSeconds?: number | undefined;
}
