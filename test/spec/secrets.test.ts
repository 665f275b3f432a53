import { describe, expect, it } from "vitest";
import { findSpecSecrets, SecretSign, SPEC_VERSION } from "../../src/spec.js";
import { secretful } from "../support/spec-documents.js";

describe("findSpecSecrets", () => {
  it("names each place in a pasted .mcp.json and why, never the value", () => {
    const hints = findSpecSecrets(secretful);
    expect(hints).toEqual([
      { path: "bundle.mcpServers[0].args[3]", server: "github", sign: SecretSign.Flag },
      { path: "bundle.mcpServers[0].args[4]", server: "github", sign: SecretSign.Flag },
      { path: "bundle.mcpServers[0].env.GITHUB_PERSONAL_ACCESS_TOKEN", server: "github", sign: SecretSign.Field },
      { path: "bundle.mcpServers[1].url", server: "remote", sign: SecretSign.Userinfo },
      { path: "bundle.mcpServers[1].headers.Authorization", server: "remote", sign: SecretSign.Field },
    ]);
    expect(JSON.stringify(hints)).not.toMatch(/abc123|xyz|ghp_|hunter2|sk-/);
  });

  it.each([
    ["userinfo in a url", { url: "https://user:pw@h.example.com/mcp" }, "url", SecretSign.Userinfo],
    ["a lone user in a url", { url: "https://ghp_token@h.example.com/mcp" }, "url", SecretSign.Userinfo],
    ["a ?token= query", { url: "https://h.example.com/mcp?token=abc" }, "url", SecretSign.Query],
    ["an &api_key= query", { url: "https://h.example.com/mcp?v=2&api_key=abc" }, "url", SecretSign.Query],
    ["the value after --api-key", { command: "x", args: ["--api-key", "abc"] }, "args[1]", SecretSign.Flag],
    ["a --password=value", { command: "x", args: ["--password=abc"] }, "args[0]", SecretSign.Flag],
    ["an sk- key", { command: "x", args: ["sk-proj-0123456789abcdefghij"] }, "args[0]", SecretSign.Value],
    ["a ghp_ token", { command: "x", args: ["ghp_0123456789abcdefghijABCDEFGHIJ0123"] }, "args[0]", SecretSign.Value],
    ["a long high-entropy run", { command: "x", args: ["a9F3kQ7zL2mX8pR4tV6wY1bN5cH0jD"] }, "args[0]", SecretSign.Value],
    ["a JWT", { command: "x", args: ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig"] }, "args[0]", SecretSign.Value],
    ["a credential-named env var", { command: "x", env: { OPENAI_API_KEY: "abc" } }, "env.OPENAI_API_KEY", SecretSign.Field],
    ["an odd header name", { url: "http://h", headers: { "X-Api-Key": "abc" } }, 'headers["X-Api-Key"]', SecretSign.Field],
  ])("reports %s", (_label, server, where, sign) => {
    const document = { spec: SPEC_VERSION, bundle: { mcpServers: [{ name: "s", ...server }] } };
    expect(findSpecSecrets(document)).toEqual([{ path: `bundle.mcpServers[0].${where}`, server: "s", sign }]);
  });

  it.each([
    ["a ${VAR} env value", { command: "x", env: { GITHUB_TOKEN: "${GITHUB_TOKEN}" } }],
    ["a Bearer ${VAR} header", { url: "http://h", headers: { Authorization: "Bearer ${TOKEN}" } }],
    ["a ${VAR} after a flag", { command: "x", args: ["--api-key", "${API_KEY}"] }],
    ["a ${VAR} in a query", { url: "https://h/mcp?token=${TOKEN}" }],
    ["${VAR} userinfo", { url: "https://${USER}:${PASS}@h/mcp" }],
    ["a flag followed by another flag", { command: "x", args: ["--no-auth", "--port", "8080"] }],
    ["ordinary args", { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/projects"] }],
    ["a UUID-free, short id", { command: "x", args: ["--id", "1234"] }],
  ])("does not report %s", (_label, server) => {
    expect(findSpecSecrets({ spec: SPEC_VERSION, bundle: { mcpServers: [{ name: "s", ...server }] } })).toEqual([]);
  });

  it("names a flag whose last word is key, and misses a short secret nothing names: a guess both ways", () => {
    const hints = findSpecSecrets({
      bundle: { mcpServers: [{ name: "s", command: "x", args: ["--keyboard", "us", "--sort-key", "date", "-p", "hunter2", "hunter2"] }] },
    });
    expect(hints).toEqual([{ path: "bundle.mcpServers[0].args[3]", server: "s", sign: SecretSign.Flag }]);
  });

  describe("on a table of places that do and do not hold a credential", () => {
    const uuid = "123e4567-e89b-12d3-a456-426614174000";
    /** [label, the server's fields, each place holding a credential and its sign]. */
    const holding: Array<[string, Record<string, unknown>, Record<string, SecretSign>]> = [
      ["the value after --api-key", { command: "x", args: ["--api-key", "abc123"] }, { "args[1]": SecretSign.Flag }],
      ["a --password=value", { command: "x", args: ["--password=abc123"] }, { "args[0]": SecretSign.Flag }],
      ["the value after --pass", { command: "x", args: ["--pass", "hunter2"] }, { "args[1]": SecretSign.Flag }],
      ["the value after --authtoken", { command: "x", args: ["--authtoken", "abc123"] }, { "args[1]": SecretSign.Flag }],
      ["the value after --client-secret=", { command: "x", args: ["--client-secret=abc123"] }, { "args[0]": SecretSign.Flag }],
      ["an sk- key among args", { command: "x", args: ["sk-proj-0123456789abcdefghij"] }, { "args[0]": SecretSign.Value }],
      ["a JWT among args", { command: "x", args: ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig"] }, { "args[0]": SecretSign.Value }],
      ["a credential-named env var", { command: "x", env: { OPENAI_API_KEY: "abc" } }, { "env.OPENAI_API_KEY": SecretSign.Field }],
      ["a credential-named header", { url: "http://h", headers: { "X-Api-Key": "abc" } }, { 'headers["X-Api-Key"]': SecretSign.Field }],
      ["userinfo in a url", { url: "https://user:pw@h.example.com/mcp" }, { url: SecretSign.Userinfo }],
      [
        "userinfo in a database url after a flag",
        { command: "x", args: ["--db-url", "postgres://u:pw@db.example.com/app"] },
        { "args[1]": SecretSign.Userinfo },
      ],
      [
        "userinfo in a database url in env",
        { command: "x", env: { DATABASE_URL: "postgres://u:pw@db.example.com/app" } },
        { "env.DATABASE_URL": SecretSign.Userinfo },
      ],
      ["a ?token= query", { url: "https://h.example.com/mcp?token=abc" }, { url: SecretSign.Query }],
      ["a ?jwt= query", { url: "https://h.example.com/mcp?jwt=abc123" }, { url: SecretSign.Query }],
      ["an #access_token= fragment", { url: "https://h.example.com/mcp#access_token=abc123&state=x" }, { url: SecretSign.Query }],
      [
        "a key-shaped query value under a neutral name",
        { url: "https://h.example.com/mcp?k=ghp_0123456789abcdefghijABCDEFGHIJ0123" },
        { url: SecretSign.Query },
      ],
      [
        "a key-shaped segment of a url's path",
        { url: "https://hooks.example.com/services/T024BE7LD/B0123456/aZ3kQ9xLm2Pq7Rt5Vw8Yb1Nc" },
        { url: SecretSign.Value },
      ],
      ["a bot token in a url's path", { url: "https://api.example.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/getMe" }, { url: SecretSign.Value }],
      ["an sk- key in a url's path", { url: "https://h.example.com/mcp/sk-proj-0123456789abcdefghij" }, { url: SecretSign.Value }],
      ["a header line after --header", { command: "x", args: ["--header", "Authorization: Bearer abc123"] }, { "args[1]": SecretSign.Header }],
      ["a header line after -H", { command: "x", args: ["-H", "X-Api-Key: abc123"] }, { "args[1]": SecretSign.Header }],
      ["a header line in --header=", { command: "x", args: ["--header=Authorization: Bearer abc123"] }, { "args[0]": SecretSign.Header }],
      ["a cookie header line", { command: "x", args: ["--header", "Cookie: session=abc123"] }, { "args[1]": SecretSign.Header }],
      ["a header line inside command", { command: "curl -H 'Authorization: Bearer abc123' https://h.example.com" }, { command: SecretSign.Header }],
      ["a header line in a quoted command word", { command: "server --header 'X-Api-Key: abc123'" }, { command: SecretSign.Header }],
      ["a credential assignment inside command", { command: "API_KEY=abc123 node server.js" }, { command: SecretSign.Field }],
      ["-e NAME=value inside command", { command: "docker run -e GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ0123 image" }, { command: SecretSign.Field }],
      ["--api-key inside command", { command: "npx server --api-key abc123" }, { command: SecretSign.Flag }],
      ["--token= inside command", { command: "npx server --token=abc123" }, { command: SecretSign.Flag }],
      ["userinfo in a url inside command", { command: "server https://u:pw@h.example.com/mcp" }, { command: SecretSign.Userinfo }],
      ["a UUID in an env var of a neutral name", { command: "x", env: { MAPS_LICENSE: uuid } }, { "env.MAPS_LICENSE": SecretSign.Value }],
      ["a UUID in a header of a neutral name", { url: "http://h", headers: { "X-License": uuid } }, { 'headers["X-License"]': SecretSign.Value }],
      ["a UUID as a positional arg", { command: "x", args: [uuid] }, { "args[0]": SecretSign.Value }],
      ["a UUID after --license", { command: "x", args: ["--license", uuid] }, { "args[1]": SecretSign.Value }],
    ];
    /** [label, the server's fields]: places that hold no credential. */
    const clean: Array<[string, Record<string, unknown>]> = [
      ["the value after --keyboard", { command: "x", args: ["--keyboard", "us"] }],
      ["the value after --max-tokens", { command: "x", args: ["--max-tokens", "100"] }],
      ["the value after --tokenizer", { command: "x", args: ["--tokenizer", "gpt2"] }],
      ["the value after --auth-type", { command: "x", args: ["--auth-type", "oauth"] }],
      ["the value after --passthrough", { command: "x", args: ["--passthrough", "stdio"] }],
      ["the value after --bearer-format", { command: "x", args: ["--bearer-format", "jwt"] }],
      ["the path after --keyfile", { command: "x", args: ["--keyfile", "/etc/ssl/server.pem"] }],
      ["the path after --api-key-file", { command: "x", args: ["--api-key-file", "/run/secrets/key"] }],
      ["a flag followed by another flag", { command: "x", args: ["--no-auth", "--port", "8080"] }],
      ["an Accept header line", { command: "x", args: ["--header", "Accept: application/json"] }],
      ["a request id header line", { command: "x", args: ["--header", "X-Request-Id: 123"] }],
      ["a header line holding a ${VAR}", { command: "x", args: ["-H", "Authorization: Bearer ${TOKEN}"] }],
      ["an ordinary url path", { url: "https://h.example.com/repos/octocat/hello-world/issues" }],
      ["a commit hash in a url's path", { url: "https://raw.example.com/o/r/a94a8fe5ccb19ba61c4c0873d391e987982fbbd3/README.md" }],
      ["a UUID in a url's path", { url: `https://h.example.com/projects/${uuid}/mcp` }],
      ["a plain fragment", { url: "https://h.example.com/mcp#section-2" }],
      ["an ordinary query", { url: "https://h.example.com/mcp?format=json&page=2" }],
      ["a query naming a key's format", { url: "https://h.example.com/mcp?key-format=pem" }],
      ["a ${VAR} in a query", { url: "https://h.example.com/mcp?token=${TOKEN}" }],
      ["an ordinary command", { command: "npx -y @modelcontextprotocol/server-filesystem /home/me/projects" }],
      ["a command with flags", { command: "node server.js --port 8080 --verbose --max-tokens 500" }],
      ["a command with --keyboard-layout", { command: "npx tsx server.ts --keyboard-layout us" }],
      ["a command naming an env var without a value", { command: "docker run -i --rm -e GITHUB_TOKEN ghcr.io/github/github-mcp-server" }],
      ["a command assigning a ${VAR}", { command: "API_KEY=${API_KEY} node server.js" }],
      ["a UUID in an env var named as an id", { command: "x", env: { PROJECT_ID: uuid } }],
      ["a UUID after --project-id", { command: "x", args: ["--project-id", uuid] }],
      ["a UUID after --id", { command: "x", args: ["--id", uuid] }],
      ["a UUID in --workspace=", { command: "x", args: [`--workspace=${uuid}`] }],
      ["a model name", { command: "x", args: ["--model", "claude-3-5-sonnet-20241022"] }],
      ["a short id", { command: "x", args: ["--id", "1234"] }],
      ["an ordinary env var", { command: "x", env: { LOG_LEVEL: "debug" } }],
    ];
    const places = (server: Record<string, unknown>): Record<string, SecretSign> =>
      Object.fromEntries(
        findSpecSecrets({ spec: SPEC_VERSION, bundle: { mcpServers: [{ name: "s", ...server }] } }).map((hint) => [
          hint.path.replace("bundle.mcpServers[0].", ""),
          hint.sign,
        ]),
      );

    it.each(holding)("finds %s", (_label, server, where) => {
      expect(places(server)).toEqual(where);
    });

    it.each(clean)("reports nothing for %s", (_label, server) => {
      expect(places(server)).toEqual({});
    });
  });

  it("reads places outside the bundle too, with an empty server", () => {
    expect(findSpecSecrets({ spec: SPEC_VERSION, model: { apiKey: "x", baseUrl: "http://u:p@h/v1" } })).toEqual([
      { path: "model.apiKey", server: "", sign: SecretSign.Field },
      { path: "model.baseUrl", server: "", sign: SecretSign.Userinfo },
    ]);
  });

  it("names a server of the object form by its key", () => {
    expect(findSpecSecrets({ bundle: { mcpServers: { gh: { command: "x", env: { TOKEN: "t" } } } } })).toEqual([
      { path: "bundle.mcpServers.gh.env.TOKEN", server: "gh", sign: SecretSign.Field },
    ]);
  });

  it("reads any value without throwing, cycles included", () => {
    const cyclic: Record<string, unknown> = { token: "t" };
    cyclic.self = cyclic;
    expect(findSpecSecrets(cyclic)).toEqual([{ path: "token", server: "", sign: SecretSign.Field }]);
    for (const value of [null, undefined, 1, "sk-0123456789abcdefghijklmn", [], () => 1]) expect(() => findSpecSecrets(value)).not.toThrow();
  });
});
