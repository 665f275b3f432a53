/**
 * @module key-fingerprint
 * The keyed fingerprint an API key is known by in latch records, snapshots and a shared
 * backend: an HMAC-SHA-256 under a secret of the runtime, so a snapshot cannot be used to
 * confirm a guessed key offline.
 *
 * Each runtime holds one secret, its key salt: random unless the host sets it
 * (`createRuntime({ keySalt })`, {@link configureKeySalt}, or the backend's). A fingerprint is
 * `hmac:`, eight hex digits naming the salt (themselves an HMAC of a fixed text, so they say
 * nothing of any key) and 32 hex digits of the key's HMAC. Two runtimes with the same salt give a
 * key the same fingerprint; runtimes with different salts never do, and the salt id says so.
 * The salt is kept across a reset, since what was exported before it must still match after.
 */

import { createHmac, randomBytes } from "node:crypto";
import { defaultState, defineSlot, setSlot, slotOf, type RuntimeState } from "../state/state.js";

/** One runtime's key salt and what is derived from it. */
interface KeySalt {
  /** The secret the fingerprints are keyed with. */
  readonly secret: Buffer;
  /** Eight hex digits naming the secret, written into every fingerprint. */
  readonly id: string;
}

/** The most API keys whose fingerprints one runtime remembers, so hashing stays a lookup on the hot path. */
export const KEY_FINGERPRINT_CACHE = 1024;

/** What a fingerprint of this version looks like: `hmac:`, the salt id and the key's HMAC. */
export const KEYED_FINGERPRINT = /^hmac:([0-9a-f]{8}):[0-9a-f]{32}$/;

/** The unkeyed fingerprint earlier versions wrote: `sha256:` and 32 hex digits. */
export const UNKEYED_FINGERPRINT = /^sha256:[0-9a-f]{32}$/;

/** The fixed text whose HMAC names a salt. */
const SALT_ID_TEXT = "agent-core key salt id";

function saltOf(secret: Buffer): KeySalt {
  return Object.freeze({ secret, id: createHmac("sha256", secret).update(SALT_ID_TEXT).digest("hex").slice(0, 8) });
}

const KEY_SALT = defineSlot<KeySalt>("key-salt", () => saltOf(randomBytes(32)), undefined, { kept: true });
const FINGERPRINTS = defineSlot("key-fingerprints", () => new Map<string, string>());

/** Reads a salt option as the secret's bytes; anything but a non-empty string is a TypeError naming the option. */
function checkedSalt(salt: unknown, where: string): Buffer {
  if (typeof salt !== "string" || salt === "") {
    throw new TypeError(
      `${where} must be a non-empty string, the secret every replica sharing snapshots or a backend is given; got ${salt === "" ? "an empty string" : typeof salt}.`,
    );
  }
  return Buffer.from(salt, "utf8");
}

/**
 * Sets the state's key salt; fingerprints made under the one it had no longer match.
 * @internal
 */
export function configureKeySaltIn(state: RuntimeState, salt: string): void {
  setSlot(state, KEY_SALT, saltOf(checkedSalt(salt, "keySalt")));
  slotOf(state, FINGERPRINTS).clear();
}

/**
 * Sets the secret the default runtime fingerprints API keys with, so that replicas (or one
 * process across restarts) that share a capabilities snapshot give a key the same fingerprint.
 *
 * Without it the secret is random per process, and a snapshot restores only its keyless
 * endpoints and those of the process that wrote it. Set it before the first request: records
 * made under the salt in force before stay unmatched. Any non-empty string is taken; give each
 * deployment its own long random one (32 characters or more), kept like any other credential,
 * since anyone holding both a snapshot and the salt can test guessed keys against it.
 *
 * @param salt - The shared secret; the same on every replica.
 * @throws {TypeError} When `salt` is not a non-empty string.
 * @example
 * configureKeySalt(process.env.AGENT_CORE_KEY_SALT!);
 * importCapabilities(JSON.parse(await readFile("capabilities.json", "utf8")));
 */
export function configureKeySalt(salt: string): void {
  configureKeySaltIn(defaultState, salt);
}

/** The id of the state's key salt, as every fingerprint it makes carries it. @internal */
export function keySaltIdIn(state: RuntimeState): string {
  return slotOf(state, KEY_SALT).id;
}

/**
 * The fingerprint of an API key under the state's salt: "" for an absent or empty key, otherwise
 * `hmac:`, the salt id and 32 hex digits of HMAC-SHA-256(salt, key). Remembered for the last
 * {@link KEY_FINGERPRINT_CACHE} keys.
 * @internal
 */
export function keyFingerprintIn(state: RuntimeState, apiKey: string | undefined | null): string {
  if (typeof apiKey !== "string" || apiKey === "") return "";
  const cache = slotOf(state, FINGERPRINTS);
  const known = cache.get(apiKey);
  if (known !== undefined) return known;
  const salt = slotOf(state, KEY_SALT);
  const fingerprint = `hmac:${salt.id}:${createHmac("sha256", salt.secret).update(apiKey).digest("hex").slice(0, 32)}`;
  if (cache.size >= KEY_FINGERPRINT_CACHE) cache.delete(cache.keys().next().value as string);
  cache.set(apiKey, fingerprint);
  return fingerprint;
}

/**
 * Why a snapshot's `key` cannot stand for any key this state fingerprints, or undefined where it
 * can: "" (no key) and a fingerprint under this state's salt can.
 * @internal
 */
export function unmatchableKeyReason(state: RuntimeState, key: unknown): string | undefined {
  if (key === "") return undefined;
  if (typeof key !== "string") return "key is not a hash";
  if (UNKEYED_FINGERPRINT.test(key)) {
    return "key is an unkeyed sha256 fingerprint from an earlier version, which no key matches any more; export the snapshot again";
  }
  const keyed = KEYED_FINGERPRINT.exec(key);
  if (keyed === null) return "key is not a hash";
  const own = keySaltIdIn(state);
  if (keyed[1] !== own)
    return `key was fingerprinted under another key salt (${keyed[1]}, this runtime's is ${own}), so it cannot match any key here; give every replica the same keySalt`;
  return undefined;
}
