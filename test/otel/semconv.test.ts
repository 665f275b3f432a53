/**
 * The convention names the otel entry writes are the ones @opentelemetry/semantic-conventions
 * publishes, under the same export names; this library's own names stay in their own namespace.
 */
import { describe, expect, it } from "vitest";
import * as stable from "@opentelemetry/semantic-conventions";
import * as incubating from "@opentelemetry/semantic-conventions/incubating";
import * as copied from "../../src/otel/semconv.js";
import { AGENT_CORE_ATTRIBUTES, AGENT_CORE_EVENTS, AGENT_CORE_METRICS } from "../../src/otel.js";

const published = incubating as unknown as Record<string, unknown>;

describe("the copied convention names", () => {
  it("each equal the package's export of the same name", () => {
    const entries = Object.entries(copied);
    expect(entries.length).toBeGreaterThan(30);
    for (const [name, value] of entries) expect(published[name], name).toBe(value);
  });

  it("take server.* and error.type from the stable conventions", () => {
    const stableNames = stable as unknown as Record<string, unknown>;
    for (const name of ["ATTR_SERVER_ADDRESS", "ATTR_SERVER_PORT", "ATTR_ERROR_TYPE", "ERROR_TYPE_VALUE_OTHER"]) {
      expect(stableNames[name], name).toBe((copied as Record<string, unknown>)[name]);
    }
  });
});

describe("the library's own names", () => {
  const own = [...Object.values(AGENT_CORE_ATTRIBUTES), ...Object.values(AGENT_CORE_EVENTS), ...Object.values(AGENT_CORE_METRICS)];

  it("all live under agent_core. and none shadows a published name", () => {
    const names = new Set(Object.values(published).filter((value): value is string => typeof value === "string"));
    for (const name of own) {
      expect(name).toMatch(/^agent_core\.[a-z_.]+$/);
      expect(names.has(name), name).toBe(false);
    }
  });

  it("name one thing each: no two alike, and no attribute named as an event or a metric", () => {
    expect(new Set(own).size).toBe(own.length);
  });
});
