// A real OAuth 2.1 authorization server for the auth tests: npm oidc-provider, configured from the environment.
//
//   PORT        where to listen (127.0.0.1)
//   RESOURCE    the protected MCP server's resource URL; tokens for it carry scopes "mcp:tools commerce:write"
//   JWKS_FILE   a JSON file {"keys": [private JWK, ...]} the provider signs with (the tests forge tokens with it)
//   NPM_DIR     the npm prefix holding node_modules/oidc-provider
//   REDIRECT    the redirect URI of the authorization-code client "mcp-app"
//
// Clients: "mcp-service" and "mcp-other" (client_credentials, JWT tokens: two principals), "opaque-service" (client_credentials, opaque
// tokens), "short-lived" (client_credentials, 1 s JWT tokens), "mcp-app"
// (authorization_code + refresh_token, PKCE), "resource-server" (only authenticates to introspection).
// Every secret is "<client_id>-secret". Any other http(s) resource indicator is a resource server too, with
// the scope "other:read", so a token for another audience can be minted.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// ESM ignores NODE_PATH: the package is found under NPM_DIR (the .interop/npm that scripts/setup-peers fills).
const entry = join(process.env.NPM_DIR, 'node_modules', 'oidc-provider', 'lib', 'index.js');
const { default: Provider } = await import(pathToFileURL(entry).href);

const port = Number(process.env.PORT);
const issuer = `http://127.0.0.1:${port}`;
const resource = process.env.RESOURCE;
const jwks = JSON.parse(readFileSync(process.env.JWKS_FILE, 'utf8'));
const redirect = process.env.REDIRECT || 'http://127.0.0.1:1/callback';

const service = (id) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
  token_endpoint_auth_method: 'client_secret_basic',
});

const provider = new Provider(issuer, {
  jwks,
  clients: [
    service('mcp-service'),
    service('mcp-other'),
    service('short-lived'),
    service('opaque-service'),
    service('resource-server'),
    {
      client_id: 'mcp-app',
      client_secret: 'mcp-app-secret',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: [redirect],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  scopes: ['openid', 'offline_access', 'mcp:tools', 'commerce:write', 'other:read'],
  pkce: { required: () => true },
  ttl: {
    AccessToken: (ctx, token, client) => (client?.clientId === 'short-lived' ? 1 : 600),
    ClientCredentials: (ctx, token, client) => (client?.clientId === 'short-lived' ? 1 : 600),
  },
  features: {
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator, client) => ({
        scope: indicator === resource ? 'mcp:tools commerce:write' : 'other:read',
        audience: indicator,
        // oidc-provider introspects only opaque tokens: that client's tokens are for the introspection tests
        accessTokenFormat: client.clientId === 'opaque-service' ? 'opaque' : 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
});
provider.listen(port, '127.0.0.1');
