import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import "../support/fast-check-seed.js";
import { createRuntime } from "../../src/runtime.js";
import { createState } from "../../src/state/state.js";
import { configureKeySaltIn, keyFingerprintIn, keySaltIdIn, KEY_FINGERPRINT_CACHE, KEYED_FINGERPRINT } from "../../src/wire/key-fingerprint.js";

const KEY = "sk-live-0123456789abcdef";
const unkeyed = (key: string) => createHash("sha256").update(key).digest("hex").slice(0, 32);

describe("keyFingerprintIn", () => {
  it("gives no key the empty fingerprint and every key an hmac: one naming the salt", () => {
    const state = createState();
    expect(keyFingerprintIn(state, undefined)).toBe("");
    expect(keyFingerprintIn(state, "")).toBe("");
    const fingerprint = keyFingerprintIn(state, KEY);
    expect(fingerprint).toMatch(KEYED_FINGERPRINT);
    expect(fingerprint.split(":")[1]).toBe(keySaltIdIn(state));
    expect(fingerprint).not.toContain(unkeyed(KEY));
  });

  it("agrees under one salt and differs under two, for any key", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (key, other) => {
        const [a, b, c] = [createState(), createState(), createState()];
        configureKeySaltIn(a, "salt one");
        configureKeySaltIn(b, "salt one");
        configureKeySaltIn(c, "salt two");
        expect(keyFingerprintIn(a, key)).toBe(keyFingerprintIn(b, key));
        expect(keyFingerprintIn(a, key)).not.toBe(keyFingerprintIn(c, key));
        if (key !== other) expect(keyFingerprintIn(a, key)).not.toBe(keyFingerprintIn(a, other));
      }),
    );
  });

  it("draws a random salt for each state that is given none", () => {
    expect(keySaltIdIn(createState())).not.toBe(keySaltIdIn(createState()));
  });

  it("answers the same past its cache of remembered keys", () => {
    const state = createState();
    const first = keyFingerprintIn(state, "key-0");
    for (let index = 1; index <= KEY_FINGERPRINT_CACHE + 10; index += 1) keyFingerprintIn(state, `key-${index}`);
    expect(keyFingerprintIn(state, "key-0")).toBe(first);
  });

  it("refuses a salt that is not a non-empty string", () => {
    expect(() => configureKeySaltIn(createState(), "")).toThrow(TypeError);
    expect(() => configureKeySaltIn(createState(), 42 as unknown as string)).toThrow(/keySalt/);
    expect(() => createRuntime({ keySalt: "" })).toThrow(/keySalt/);
  });
});

describe("snapshots between runtimes", () => {
  it("holds no unkeyed sha256 of the key", () => {
    const runtime = createRuntime();
    runtime.capabilitiesFor("http://x/v1", KEY).usageInStream = false;
    const text = JSON.stringify(runtime.exportCapabilities());
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(unkeyed(KEY));
    expect(text).not.toContain("sha256:");
    expect(text).toContain("hmac:");
  });

  it("is shared by two runtimes given the same keySalt", () => {
    const writer = createRuntime({ keySalt: "one salt for the fleet" });
    const reader = createRuntime({ keySalt: "one salt for the fleet" });
    writer.capabilitiesFor("http://x/v1", KEY).usageInStream = false;
    expect(reader.importCapabilities(writer.exportCapabilities())).toEqual({ endpoints: 1, models: 0, ignored: [] });
    expect(reader.capabilitiesFor("http://x/v1", KEY).usageInStream).toBe(false);
    expect(reader.capabilitiesFor("http://x/v1", "another key").usageInStream).toBe(true);
  });

  it("does not match under another salt, says so, and still takes the keyless entries", () => {
    const writer = createRuntime({ keySalt: "salt of the writer" });
    const reader = createRuntime({ keySalt: "salt of the reader" });
    writer.capabilitiesFor("http://x/v1", KEY).usageInStream = false;
    writer.capabilitiesFor("http://y/v1").strictSchemas = false;
    const result = reader.importCapabilities(writer.exportCapabilities());
    expect(result.endpoints).toBe(1);
    expect(result.ignored).toEqual([expect.stringMatching(/^endpoints\[0\]: key was fingerprinted under another key salt/)]);
    expect(reader.capabilitiesFor("http://x/v1", KEY).usageInStream).toBe(true);
    expect(reader.capabilitiesFor("http://y/v1").strictSchemas).toBe(false);
    expect(reader.exportCapabilities().endpoints).toHaveLength(1);
  });

  it("does not match between two runtimes left to their random salts", () => {
    const writer = createRuntime();
    writer.capabilitiesFor("http://x/v1", KEY).usageInStream = false;
    const result = createRuntime().importCapabilities(writer.exportCapabilities());
    expect(result.endpoints).toBe(0);
    expect(result.ignored[0]).toMatch(/another key salt/);
  });

  it("leaves out an unkeyed sha256 entry from an earlier version, with the reason", () => {
    const runtime = createRuntime();
    const result = runtime.importCapabilities({ version: 1, endpoints: [{ baseUrl: "http://x/v1", key: `sha256:${unkeyed(KEY)}`, usageInStream: false }] });
    expect(result).toEqual({ endpoints: 0, models: 0, ignored: [expect.stringMatching(/^endpoints\[0\]: key is an unkeyed sha256 fingerprint/)] });
    expect(runtime.capabilitiesFor("http://x/v1", KEY).usageInStream).toBe(true);
  });

  it("keeps a runtime's salt across its reset, so its own snapshot still matches", () => {
    const runtime = createRuntime();
    runtime.capabilitiesFor("http://x/v1", KEY).usageInStream = false;
    const blob = runtime.exportCapabilities();
    runtime.reset();
    expect(runtime.caches()).toEqual([]);
    expect(runtime.importCapabilities(blob).ignored).toEqual([]);
    expect(runtime.capabilitiesFor("http://x/v1", KEY).usageInStream).toBe(false);
  });

  it("matches again once configureKeySalt gives the runtime the writer's salt", () => {
    const writer = createRuntime({ keySalt: "the fleet's salt" });
    writer.capabilitiesFor("http://x/v1", KEY).strictSchemas = false;
    const reader = createRuntime();
    reader.configureKeySalt("the fleet's salt");
    expect(reader.importCapabilities(writer.exportCapabilities()).ignored).toEqual([]);
    expect(reader.capabilitiesFor("http://x/v1", KEY).strictSchemas).toBe(false);
  });
});
