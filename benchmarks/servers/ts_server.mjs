// TypeScript SDK (@modelcontextprotocol/sdk, McpServer high-level API) benchmark server: echo, add, and
// BENCH_MANY_TOOLS extra tools t0..tN-1, the same surface as the Python servers.
//
// `node ts_server.mjs` serves stdio; `node ts_server.mjs ts-json|ts-sse PORT` serves Streamable HTTP on
// node:http at 127.0.0.1:PORT/mcp, stateful (one transport and McpServer per session, the SDK's own
// pattern), with JSON or SSE responses.
//
// The SDK comes from the checkout's npm interop folder (.interop/npm, installed by scripts/setup-peers), or
// from BENCH_NODE_MODULES. ESM resolves bare names from this file's folder only, so the modules are imported
// by path.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const nodeModules =
  process.env.BENCH_NODE_MODULES || join(here, "..", "..", ".interop", "npm", "node_modules");
const load = (rel) => import(pathToFileURL(join(nodeModules, rel)).href);
const sdk = "@modelcontextprotocol/sdk/dist/esm/server/";

const [{ McpServer }, { z }] = await Promise.all([load(sdk + "mcp.js"), load("zod/index.js")]);

const text = (value) => ({
  content: [{ type: "text", text: typeof value === "string" ? value : JSON.stringify(value) }],
  structuredContent: { result: value },
});

function makeServer() {
  const server = new McpServer({ name: "bench-ts", version: "1.0" });
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

  return server;
}

async function serveHttp(kind, port) {
  const [{ StreamableHTTPServerTransport }, { isInitializeRequest }] = await Promise.all([
    load(sdk + "streamableHttp.js"),
    load("@modelcontextprotocol/sdk/dist/esm/types.js"),
  ]);
  const sessions = new Map();
  const app = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = JSON.parse(Buffer.concat(chunks).toString());
    const sid = req.headers["mcp-session-id"];
    let transport = sid === undefined ? undefined : sessions.get(sid);
    if (transport === undefined) {
      if (sid !== undefined || !isInitializeRequest(body)) {
        res.writeHead(400).end();
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: kind === "ts-json",
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      transport.onclose = () => sessions.delete(transport.sessionId);
      await makeServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  app.listen(port, "127.0.0.1");
}

if (process.argv.length > 2) {
  await serveHttp(process.argv[2], Number(process.argv[3]));
} else {
  const { StdioServerTransport } = await load(sdk + "stdio.js");
  await makeServer().connect(new StdioServerTransport());
}
