/**
 * @module testing/replayed
 * What a family reads back off a request's assistant turns as their reasoning, so a test can
 * assert what reached the model rather than what was sent.
 */
import type { Profile } from "./profile-types.js";
import { isPlainRecord } from "./guards.js";

/**
 * The reasoning a family reads off each assistant message of a body, in order, from the first of
 * its `reasoningInput` fields the message carries as a non-empty string; undefined for a family
 * whose input fields are not known. @internal
 */
export function replayedBy(profile: Profile, body: Record<string, unknown>): string[] | undefined {
  const fields = profile.reasoningInput;
  if (!fields || fields.length === 0) return undefined;
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const read: string[] = [];
  for (const message of messages) {
    if (!isPlainRecord(message) || message.role !== "assistant") continue;
    for (const field of fields) {
      const value = message[field];
      if (typeof value === "string" && value !== "") {
        read.push(value);
        break;
      }
    }
  }
  return read;
}
