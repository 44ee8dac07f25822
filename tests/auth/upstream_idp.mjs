// An upstream identity provider for the login proxy's tests (mcpkit.auth.identity): npm oidc-provider as a
// company's OpenID Connect provider WITHOUT dynamic client registration. One client is configured by hand,
// the proxy's own: "mcpkit-proxy" (secret "mcpkit-proxy-secret", redirect URI $REDIRECT, PKCE).
//
//   PORT      where to listen (127.0.0.1)
//   NPM_DIR   the npm prefix holding node_modules/oidc-provider
//   REDIRECT  the proxy's callback URL
// Any login name signs in (devInteractions) and becomes the subject; userinfo adds a "name" claim.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const entry = join(process.env.NPM_DIR, 'node_modules', 'oidc-provider', 'lib', 'index.js');
const { default: Provider } = await import(pathToFileURL(entry).href);

const port = Number(process.env.PORT);
const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: 'mcpkit-proxy',
      client_secret: 'mcpkit-proxy-secret',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: [process.env.REDIRECT],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  scopes: ['openid', 'offline_access', 'profile'],
  claims: { openid: ['sub'], profile: ['name'] },
  findAccount: (ctx, id) => ({
    accountId: id,
    claims: () => ({ sub: id, name: `User ${id}` }),
  }),
  pkce: { required: () => true },
  issueRefreshToken: () => true, // so the proxy can renew the user's token for its handlers
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: false },
    revocation: { enabled: true },
  },
});
provider.listen(port, '127.0.0.1');
