/**
 * Loads the built `./spec` entry in a real headless Chromium from a loopback page and validates a
 * document there, which is what the entry is separate from the main one for.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** The first Chromium found at /usr/bin/chromium or as chromium / chromium-browser on PATH. */
function findChromium(): string | undefined {
  const candidates = ["/usr/bin/chromium"];
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir !== "") candidates.push(join(dir, "chromium"), join(dir, "chromium-browser"));
  }
  return candidates.find((path) => existsSync(path));
}

const chromium = findChromium();
if (!chromium) console.log("spec-browser: skipped, no chromium binary at /usr/bin/chromium or as chromium / chromium-browser on PATH");

const page = `<!doctype html>
<html><head><meta charset="utf-8"><title>spec</title></head>
<body><pre id="result">pending</pre>
<script type="module">
import { parseSpec, resolveAgentSpec, findSpecSecrets, exportSpec } from "./spec.js";
const out = document.getElementById("result");
try {
  const good = parseSpec({
    spec: "agent-core/1",
    model: { name: "qwen3", temperature: 9, apiKey: "sk-nope" },
    prompt: [{ id: "persona", text: "Be brief." }],
    tools: { servers: [] },
    bundle: { mcpServers: [{ name: "gh", command: "npx", args: ["--api-key", "abc"], env: { TOKEN: "t" } }] },
  }, { bundle: true });
  const bad = parseSpec({ spec: "agent-core/2" });
  const config = resolveAgentSpec([good.spec]);
  out.textContent = JSON.stringify({
    accepted: good.spec !== undefined,
    warnings: good.warnings,
    refused: bad.errors,
    model: config.model,
    system: config.system,
    servers: config.servers,
    apiKey: config.apiKey,
    secrets: findSpecSecrets(exportSpec(good.spec)),
  });
} catch (error) {
  out.textContent = "failed: " + String(error);
}
</script></body></html>`;

describe.skipIf(!chromium)("the ./spec bundle in a browser", () => {
  let dir = "";
  let profile = "";
  let server: Server | undefined;
  let bundle = "";
  let origin = "";

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "spec-browser-"));
    profile = await mkdtemp(join(tmpdir(), "spec-browser-profile-"));
    await build({
      entryPoints: [fileURLToPath(new URL("../src/spec.ts", import.meta.url))],
      bundle: true,
      platform: "browser",
      format: "esm",
      target: "es2022",
      outfile: join(dir, "spec.js"),
      logLevel: "silent",
    });
    bundle = await readFile(join(dir, "spec.js"), "utf8");
    await writeFile(join(dir, "index.html"), page);
    const files: Record<string, [string, string]> = {
      "/": [page, "text/html; charset=utf-8"],
      "/spec.js": [bundle, "text/javascript; charset=utf-8"],
    };
    server = createServer((request, response) => {
      const file = files[request.url ?? ""];
      response.writeHead(file ? 200 : 404, { "content-type": file ? file[1] : "text/plain", connection: "close" });
      response.end(file ? file[0] : "not found");
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server?.close(() => resolve()));
    }
    await rm(dir, { recursive: true, force: true });
    await rm(profile, { recursive: true, force: true });
  });

  it("bundles with no node: import", () => {
    expect(bundle.length).toBeGreaterThan(0);
    expect(bundle).not.toMatch(/from\s*["']node:|import\s*\(\s*["']node:|require\(\s*["']node:/);
    expect(bundle).not.toMatch(/^\s*import\s[^;]*?["'][^"']+["']/m);
    expect(bundle).not.toMatch(/\brequire\s*\(/);
  });

  it("loads from a loopback page and validates a document there", async () => {
    const dom = await dumpDom(chromium as string, profile, `${origin}/`);
    const text = /<pre id="result">([\s\S]*?)<\/pre>/.exec(dom)?.[1] ?? dom;
    const decoded = text
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&amp;/g, "&");
    expect(decoded).not.toMatch(/^pending|^failed/);
    const result = JSON.parse(decoded);
    expect(result).toEqual({
      accepted: true,
      warnings: [
        "model.temperature: 9 is out of range (from 0 to 2); dropped, not clamped",
        "model.apiKey: is named like a credential, and a document carries none; dropped",
      ],
      refused: ['spec: "agent-core/2" is major 2; this host reads major 1'],
      model: "qwen3",
      system: "Be brief.",
      servers: [],
      apiKey: "",
      secrets: [{ path: "bundle.mcpServers[0].args[1]", server: "gh", sign: "flag" }],
    });
  });
});

/** Runs Chromium headless on a URL and returns the DOM it dumps, killing its process group if it hangs. */
function dumpDom(binary: string, profile: string, url: string): Promise<string> {
  const args = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    `--user-data-dir=${profile}`,
    "--virtual-time-budget=5000",
    "--dump-dom",
    url,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk.slice(0, 4000)));
    const killer = setTimeout(() => {
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
    }, 15_000);
    child.on("error", (error) => {
      clearTimeout(killer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(killer);
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // The group has already exited, which is the usual case.
        }
      }
      if (stdout.includes('id="result"')) resolve(stdout);
      else reject(new Error(`chromium exited ${code ?? signal} without a page: ${stderr.slice(0, 2000)}`));
    });
  });
}
