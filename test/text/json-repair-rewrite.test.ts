import { describe, expect, it } from "vitest";
import { repairJson } from "../../src/text/json-repair-rewrite.js";

describe("repairJson", () => {
  it("reports a text that ends inside a string as truncated", () => {
    expect(repairJson('{"a": "b').truncated).toBe(true);
  });

  it("reports a text that leaves an object open as truncated", () => {
    expect(repairJson('{"a": [1').truncated).toBe(true);
  });

  it("does not report a complete but wrong text as truncated", () => {
    expect(repairJson('{"a": b"}').truncated).toBe(false);
  });

  it("turns Python literals into JSON but leaves them inside strings", () => {
    expect(repairJson("{'a': True, 'b': 'True'}").text).toBe('{"a": true, "b": "True"}');
  });
});
