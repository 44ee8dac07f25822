// TypeScript SDK (@modelcontextprotocol/sdk, McpServer high-level API) benchmark server over stdio:
// echo, add, and BENCH_MANY_TOOLS extra tools t0..tN-1, the same surface as the Python servers.
//
// The SDK comes from the checkout's npm interop folder (.interop/npm, installed by scripts/setup), or from
// BENCH_NODE_MODULES. ESM resolves bare names from this file's folder only, so the modules are imported
// by path.
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const nodeModules =
  process.env.BENCH_NODE_MODULES || join(here, "..", "..", ".interop", "npm", "node_modules");
const load = (rel) => import(pathToFileURL(join(nodeModules, rel)).href);
const sdk = "@modelcontextprotocol/sdk/dist/esm/server/";

const [{ McpServer }, { StdioServerTransport }, { z }] = await Promise.all([
  load(sdk + "mcp.js"),
  load(sdk + "stdio.js"),
  load("zod/index.js"),
]);

const server = new McpServer({ name: "bench-ts", version: "1.0" });
const text = (value) => ({
  content: [{ type: "text", text: typeof value === "string" ? value : JSON.stringify(value) }],
  structuredContent: { result: value },
});

server.registerTool(
  "echo",
  {
    description: "Return the text unchanged.",
    inputSchema: { text: z.string() },
    outputSchema: { result: z.string() },
  },
  async ({ text: t }) => text(t),
);
server.registerTool(
  "add",
  {
    description: "Add two integers.",
    inputSchema: { a: z.number().int(), b: z.number().int() },
    outputSchema: { result: z.number().int() },
  },
  async ({ a, b }) => text(a + b),
);
const many = Number(process.env.BENCH_MANY_TOOLS || 0);
for (let i = 0; i < many; i++) {
  server.registerTool(
    `t${i}`,
    {
      description: "An extra tool for the tools/list benchmark.",
      inputSchema: { x: z.number().int(), label: z.string().default("") },
      outputSchema: { result: z.string() },
    },
    async ({ x, label }) => text(`${label}${x + i}`),
  );
}

await server.connect(new StdioServerTransport());
