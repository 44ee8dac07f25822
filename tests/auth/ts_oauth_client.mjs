// The TypeScript SDK's OAuth client against a server behind mcpkit's authorization server (the login proxy).
// argv: NPM_DIR SERVER_URL REDIRECT_URL. It registers itself (dynamic registration), prints
// "AUTHORIZE <url>" for the test's browser, reads the code the browser brought back from stdin, finishes
// the authorization, calls the whoami tool and prints "RESULT <json>".
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [npmDir, serverUrl, redirectUrl] = process.argv.slice(2);
const sdk = (path) => import(pathToFileURL(join(npmDir, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm', path)).href);
const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { UnauthorizedError } = await sdk('client/auth.js');

const saved = {};
const provider = {
  get redirectUrl() { return redirectUrl; },
  get clientMetadata() {
    return {
      client_name: 'TypeScript SDK Client',
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  },
  clientInformation: () => saved.client,
  saveClientInformation: (info) => { saved.client = info; },
  tokens: () => saved.tokens,
  saveTokens: (tokens) => { saved.tokens = tokens; },
  redirectToAuthorization: (url) => { console.log(`AUTHORIZE ${url.href}`); },
  saveCodeVerifier: (verifier) => { saved.verifier = verifier; },
  codeVerifier: () => saved.verifier,
};

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const first = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
try {
  await new Client({ name: 'ts-oauth', version: '1.0.0' }).connect(first);
  throw new Error('connected without signing in');
} catch (error) {
  if (!(error instanceof UnauthorizedError)) throw error;
}
const code = (await lines.next()).value.trim();
await first.finishAuth(code);
const client = new Client({ name: 'ts-oauth', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }));
const result = await client.callTool({ name: 'whoami', arguments: {} });
console.log(`RESULT ${JSON.stringify({ result: result.structuredContent, client: saved.client.client_id })}`);
await client.close();
process.exit(0);
