/**
 * Documents and helpers the tests of the ./spec entry share: a document with the current token,
 * a parse that must be accepted, and a pasted .mcp.json full of credentials.
 */
import { expect } from "vitest";
import { parseSpec, SPEC_VERSION, type AgentSpec } from "../../src/spec.js";

/** Parses a document that must be accepted, failing the test with its errors otherwise. */
export function accept(value: unknown, options?: Parameters<typeof parseSpec>[1]): { spec: AgentSpec; warnings: string[] } {
  const result = parseSpec(value, options);
  expect(result.errors).toEqual([]);
  expect(result.spec).toBeDefined();
  return { spec: result.spec as AgentSpec, warnings: result.warnings };
}

/** A document with the current token and the given fields. */
export function doc(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { spec: SPEC_VERSION, ...fields };
}

/** A pasted .mcp.json whose servers carry credentials in args, env, url and headers. */
export const secretful = {
  spec: SPEC_VERSION,
  bundle: {
    mcpServers: [
      {
        name: "github",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-github", "--api-key", "abc123def", "--token=xyz"],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_0123456789abcdefghijABCDEFGHIJ012345" },
      },
      { name: "remote", url: "https://bob:hunter2@mcp.example.com/sse?token=abc", headers: { Authorization: "Bearer sk-abcdefghijklmnopqrstuvwx" } },
    ],
  },
};
