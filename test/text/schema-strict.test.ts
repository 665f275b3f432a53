import { describe, expect, it } from "vitest";
import { sanitizeTools } from "../../src/text/schema-compat.js";
import { SCHEMA_SHAPES } from "../support/adversarial.js";
import { strictModeViolations } from "../support/strict-mode.js";

describe("sanitizeTools on the bench's hostile reference shapes", () => {
  it.each(SCHEMA_SHAPES.map((shape) => [shape.name, shape] as const))("%s: strict and meeting every rule, or strict off with a notice", (_, shape) => {
    for (const bytes of [500, 4000]) {
      const notices: string[] = [];
      const [tool] = sanitizeTools(shape.build(bytes), { onNotice: (text) => notices.push(text) });
      if (tool?.function.strict === true) {
        expect(notices).toEqual([]);
        expect(strictModeViolations(tool.function.parameters)).toEqual([]);
      } else {
        expect(tool?.function.strict).toBe(false);
        expect(notices).toHaveLength(1);
      }
    }
  });
});
