/**
 * @module approval
 * Which calls a run may make without a person: the approve policy asked per call, what a denied
 * call is answered with, and the decisions a person hands resumeAgentLoop, checked against the
 * calls that are waiting for them.
 */

import type { ToolCallRequest } from "../text/tool-calls.js";
import { AgentCoreError, brand, isErrorNamed, type AgentCoreErrorOptions } from "../text/error-base.js";
import { errorMessage } from "../text/errors.js";
import { isPlainRecord } from "../text/guards.js";

/** What a denied call is answered with, before any reason given. */
export const DENIED_CALL = "Not run: this call was denied.";

/**
 * What an approve policy says of one call: run it (`allow`), answer it as denied (`deny`, or
 * `{ deny: reason }` to give the model the reason), or hold it for a person (`ask`).
 */
export type ApprovalVerdict = "allow" | "deny" | "ask" | { deny: string };

/**
 * Decides, per call, whether it runs, is denied, or waits for a person.
 *
 * Handed the call as dispatch would be handed it: the tool a call_tool names, with repaired
 * arguments. Asked once per call, after the arguments were checked; a policy that throws or
 * answers anything else is read as `ask`.
 */
export type ApprovePolicy = (call: ToolCallRequest) => ApprovalVerdict | Promise<ApprovalVerdict>;

/** A person's decision on one held call: `true` runs it, `{ deny: reason }` answers it as denied with that reason. */
export type ApprovalDecision = true | { deny: string };

/** The decisions a person made, by call id. */
export type ApprovalDecisions = Readonly<Record<string, ApprovalDecision>>;

/** A verdict or a decision as the loop reads it. */
export interface ReadVerdict {
  kind: "allow" | "deny" | "ask";
  /** The reason a denial gave. */
  reason?: string | undefined;
}

/** What a denied call is answered with: {@link DENIED_CALL}, and the reason where one was given. */
export function denialText(reason?: string): string {
  const given = typeof reason === "string" ? reason.trim() : "";
  return given === "" ? DENIED_CALL : `${DENIED_CALL} Reason: ${given}`;
}

function readVerdict(value: unknown): ReadVerdict {
  if (value === "allow" || value === "deny") return { kind: value };
  if (isPlainRecord(value) && typeof value.deny === "string") return { kind: "deny", reason: value.deny };
  return { kind: "ask" };
}

/**
 * Asks the policy about one call; what it throws or answers out of turn is `ask`, and a throw is
 * said as a notice. @internal
 */
export async function askPolicy(policy: ApprovePolicy, request: ToolCallRequest, onNotice: (text: string) => void): Promise<ReadVerdict> {
  try {
    return readVerdict(await policy(request));
  } catch (error) {
    onNotice(`The approve policy failed on ${request.name} (${errorMessage(error)}); the call waits for a person.`);
    return { kind: "ask" };
  }
}

/** Options for an {@link ApprovalDecisionError}. */
export interface ApprovalDecisionErrorOptions extends AgentCoreErrorOptions {
  /** Decided ids that no waiting call has. */
  unknownIds: string[];
  /** Ids whose decision is neither `true` nor `{ deny: string }`. */
  malformedIds: string[];
  /** The ids of the calls waiting for a decision. */
  pendingIds: string[];
}

/**
 * What resumeAgentLoop throws, before anything runs, for decisions that name a call nothing is
 * waiting on or that are neither `true` nor `{ deny: reason }`.
 */
export class ApprovalDecisionError extends AgentCoreError {
  override readonly name = "ApprovalDecisionError" as const;
  /** Decided ids that no waiting call has. */
  readonly unknownIds: string[];
  /** Ids whose decision could not be read. */
  readonly malformedIds: string[];
  /** The ids of the calls waiting for a decision. */
  readonly pendingIds: string[];

  static {
    brand(this, "ApprovalDecisionError");
  }

  /** Makes the error; the message names the ids and the calls that are waiting. */
  constructor(options: ApprovalDecisionErrorOptions) {
    const parts: string[] = [];
    if (options.unknownIds.length > 0) parts.push(`no call waiting has the id${options.unknownIds.length === 1 ? "" : "s"} ${options.unknownIds.join(", ")}`);
    if (options.malformedIds.length > 0)
      parts.push(`the decision${options.malformedIds.length === 1 ? "" : "s"} for ${options.malformedIds.join(", ")} must be true or { deny: reason }`);
    const waiting = options.pendingIds.length > 0 ? options.pendingIds.join(", ") : "none";
    super({ message: options.message ?? `The decisions cannot be applied: ${parts.join("; ")} (waiting: ${waiting}). Nothing was run.`, cause: options.cause });
    this.unknownIds = options.unknownIds;
    this.malformedIds = options.malformedIds;
    this.pendingIds = options.pendingIds;
  }

  /** Tells an ApprovalDecisionError from anything else, also one from another copy of this package. */
  static override is(value: unknown): value is ApprovalDecisionError {
    return isErrorNamed(value, "ApprovalDecisionError", "unknownIds");
  }
}

/**
 * Reads a person's decisions against the ids of the calls waiting for them: each decided call's
 * verdict, the others left to wait. Throws ApprovalDecisionError for an id nothing waits on or a
 * decision it cannot read; absent decisions, and an id given `undefined`, decide nothing. @internal
 */
export function readDecisions(decisions: unknown, pendingIds: readonly string[]): Map<string, ReadVerdict> {
  const read = new Map<string, ReadVerdict>();
  if (decisions === undefined || decisions === null) return read;
  if (!isPlainRecord(decisions)) {
    throw new ApprovalDecisionError({
      message: "The decisions must be an object of call ids to true or { deny: reason }. Nothing was run.",
      unknownIds: [],
      malformedIds: [],
      pendingIds: [...pendingIds],
    });
  }
  const waiting = new Set(pendingIds);
  const unknownIds: string[] = [];
  const malformedIds: string[] = [];
  for (const [id, decision] of Object.entries(decisions)) {
    if (decision === undefined) continue;
    if (!waiting.has(id)) unknownIds.push(id);
    else if (decision === true) read.set(id, { kind: "allow" });
    else if (isPlainRecord(decision) && typeof decision.deny === "string") read.set(id, { kind: "deny", reason: decision.deny });
    else malformedIds.push(id);
  }
  if (unknownIds.length > 0 || malformedIds.length > 0) throw new ApprovalDecisionError({ unknownIds, malformedIds, pendingIds: [...pendingIds] });
  return read;
}
