// Packs the library, checks the tarball's types with attw, installs it with openai and the optional
// peers of ./mcp (the MCP SDK), ./otel (the OpenTelemetry API) and ./redis (node-redis) into a scratch
// project, imports every entry point from there, and bundles ./spec for the browser to prove it pulls
// in no node: module.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const run = (command, args, cwd) => execFileSync(command, args, { cwd, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
if (!existsSync(join(root, "dist", "index.js"))) {
  console.error("smoke: dist/ is missing; run npm run build first");
  process.exit(1);
}
const scratch = mkdtempSync(join(tmpdir(), "agent-core-smoke-"));
try {
  // The build has just run; --ignore-scripts keeps prepack from running it a second time.
  const packed = JSON.parse(run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", scratch], root));
  const tarball = join(scratch, packed[0].filename);
  console.log(`smoke: packed ${packed[0].filename} (${packed[0].files.length} files, ${packed[0].size} bytes)`);

  process.stdout.write(run("npx", ["attw", tarball, "--profile", "esm-only", "--format", "table-flipped"], root));

  const project = join(scratch, "project");
  run("mkdir", ["-p", project]);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "smoke", private: true, type: "module" }));
  const openai = manifest.devDependencies?.openai ?? "latest";
  const mcpSdk = manifest.devDependencies?.["@modelcontextprotocol/sdk"] ?? "latest";
  const otelApi = manifest.devDependencies?.["@opentelemetry/api"] ?? "latest";
  const redis = manifest.devDependencies?.redis ?? "latest";
  run(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      tarball,
      `openai@${openai}`,
      `@modelcontextprotocol/sdk@${mcpSdk}`,
      `@opentelemetry/api@${otelApi}`,
      `redis@${redis}`,
    ],
    project,
  );

  const entries = Object.keys(manifest.exports).filter((key) => key !== "./package.json");
  const script = entries
    .map(
      (key, index) =>
        `import * as e${index} from "${manifest.name}${key === "." ? "" : key.slice(1)}"; if (Object.keys(e${index}).length === 0) throw new Error("${key} exports nothing");`,
    )
    .join("\n");
  writeFileSync(join(project, "check.mjs"), `${script}\nconsole.log("smoke: imported ${entries.join(", ")}");\n`);
  process.stdout.write(run("node", ["check.mjs"], project));

  // ./mcp reaches the core through the main entry at run time, so the two share one error family.
  writeFileSync(
    join(project, "mcp.mjs"),
    `import { AgentCoreError } from "${manifest.name}"; import { McpServerError } from "${manifest.name}/mcp";\n` +
      `if (!(new McpServerError({ server: "s", problem: "closed" }) instanceof AgentCoreError)) throw new Error("./mcp carries a second copy of the core");\n` +
      `console.log("smoke: ./mcp shares the main entry's classes");\n`,
  );
  process.stdout.write(run("node", ["mcp.mjs"], project));
  // ./otel runs on the API alone (its no-op tracer here), and only ./otel ever names the API.
  writeFileSync(
    join(project, "otel.mjs"),
    `import { otelRun } from "${manifest.name}/otel"; const run = otelRun(); run.onEvent({ kind: "done", outcome: "answered" }); run.end(); console.log("smoke: ./otel traced a run on the no-op API");\n`,
  );
  process.stdout.write(run("node", ["otel.mjs"], project));
  const installed = join(project, "node_modules", ...manifest.name.split("/"), "dist");
  const naming = ["index.js", "spec.js", "testing.js", "cli.js"].filter((file) => readFileSync(join(installed, file), "utf8").includes("@opentelemetry/"));
  if (naming.length > 0) throw new Error(`entries other than ./otel name @opentelemetry: ${naming.join(", ")}`);
  // ./redis reaches the core through the main entry at run time, so the two share one error family.
  writeFileSync(
    join(project, "redis.mjs"),
    `import { AgentCoreError } from "${manifest.name}"; import { RedisBackendError } from "${manifest.name}/redis";\n` +
      `if (!(new RedisBackendError({ url: "redis://127.0.0.1:1" }) instanceof AgentCoreError)) throw new Error("./redis carries a second copy of the core");\n` +
      `console.log("smoke: ./redis shares the main entry's classes");\n`,
  );
  process.stdout.write(run("node", ["redis.mjs"], project));

  const esbuild = join(root, "node_modules", ".bin", "esbuild");
  writeFileSync(join(project, "browser.mjs"), `import { parseSpec } from "${manifest.name}/spec"; console.log(parseSpec({}));\n`);
  run(esbuild, ["browser.mjs", "--bundle", "--platform=browser", "--format=esm", "--metafile=meta.json", "--outfile=out.js", "--log-level=warning"], project);
  const meta = JSON.parse(readFileSync(join(project, "meta.json"), "utf8"));
  const inputs = Object.keys(meta.inputs);
  const nodeImports = Object.values(meta.inputs).flatMap((input) => input.imports.filter((item) => item.path.startsWith("node:") || item.external));
  const bundled = readFileSync(join(project, "out.js"), "utf8");
  if (nodeImports.length > 0 || /from\s*["']node:|require\(["']node:/.test(bundled)) {
    throw new Error(`./spec pulls in node modules for the browser: ${JSON.stringify(nodeImports)}`);
  }
  console.log(`smoke: ./spec bundles for the browser from ${inputs.length} inputs, ${bundled.length} bytes, no node: module`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
