/**
 * @module message-check
 * A transcript checked before it is sent: an array of at least one message, each an object with
 * a role an OpenAI-compatible server knows. What fails is refused with a TypeError naming the
 * field and what was given, instead of a server error that is then retried.
 */

import { quoteGiven } from "./guards.js";

/** The roles a chat message may carry, as OpenAI-compatible servers read them. */
export const MESSAGE_ROLES: readonly string[] = Object.freeze(["system", "developer", "user", "assistant", "tool"]);

/**
 * Checks that a transcript can be sent: an array, not empty, of objects each with a known role.
 *
 * @param messages - The transcript as given.
 * @param field - The name the error calls it by (`messages`, `body.messages`).
 * @throws TypeError naming the field, the index and what was given.
 * @internal
 */
export function checkMessages(messages: unknown, field: string): void {
  if (!Array.isArray(messages))
    throw new TypeError(`${field} must be an array of chat messages ([{ role: "user", content: "…" }]); given ${quoteGiven(messages)}.`);
  if (messages.length === 0) throw new TypeError(`${field} is empty: a request needs at least one message ([{ role: "user", content: "…" }]).`);
  messages.forEach((message: unknown, index) => {
    if (!message || typeof message !== "object" || Array.isArray(message))
      throw new TypeError(`${field}[${index}] must be a chat message object ({ role: "user", content: "…" }); given ${quoteGiven(message)}.`);
    const role = (message as { role?: unknown }).role;
    if (typeof role !== "string" || !MESSAGE_ROLES.includes(role))
      throw new TypeError(`${field}[${index}].role must be one of ${MESSAGE_ROLES.map((name) => `"${name}"`).join(", ")}; given ${quoteGiven(role)}.`);
  });
}
