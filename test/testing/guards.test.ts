import { describe, expect, it } from "vitest";
import { isPlainRecord } from "../../src/testing/guards.js";

describe("isPlainRecord", () => {
  it("takes a JSON object and refuses null, arrays and every other value", () => {
    expect(isPlainRecord({})).toBe(true);
    expect(isPlainRecord(JSON.parse('{"messages":[]}'))).toBe(true);
    for (const value of [null, undefined, [], [{}], "{}", 0, true]) expect(isPlainRecord(value), JSON.stringify(value)).toBe(false);
  });
});
