import { runAgentLoop } from "@cubicecho/agent-core";
import { connectMcpServers } from "@cubicecho/agent-core/mcp";

// The filesystem server from npm, allowed into this folder only.
const mcp = await connectMcpServers({
  files: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", import.meta.dirname] },
});
try {
  const { turn, toolCalls } = await runAgentLoop({
    config: {
      baseUrl: process.env.AGENT_CORE_BASE_URL ?? "http://127.0.0.1:8080/v1",
      apiKey: process.env.OPENAI_API_KEY,
      model: process.env.AGENT_CORE_MODEL ?? "qwen3-8b",
      maxToolIterations: 10,
      toolDiscovery: "proxy", // a fixed tool array: loads never cost the prompt cache
    },
    messages: [{ role: "user", content: "Which example programs are in this folder?" }],
    ...mcp,
  });
  for (const call of toolCalls) console.log(`[${call.name}] ${call.content.split("\n")[0]}`);
  console.log(turn.content);
} finally {
  await mcp.close();
}
