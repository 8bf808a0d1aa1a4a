// A real OpenID provider for Sunrise's sign-in tests: oidc-provider (a certified
// implementation) with its development login and consent pages, on 127.0.0.1 only.
//
// Configured by the environment (tests/utils/oidc_provider.py sets it):
//   OIDC_FD              a listening socket on 127.0.0.1 handed over by the test (no port race)
//   OIDC_ISSUER          http://127.0.0.1:<that socket's port>
//   OIDC_CLIENT          JSON {client_id, client_secret, redirect_uris}
//   OIDC_JWKS            JSON {keys: [private RSA JWK]}: the test knows the signing key
//   OIDC_ACCOUNTS        JSON {login: {email, groups}}; any password signs in (dev pages)
//   OIDC_MAX_LIFETIME_S  the process exits after this many seconds, whatever happens
// It also exits when its stdin closes, so it never outlives the test process.
import Provider from 'oidc-provider';

const client = JSON.parse(process.env.OIDC_CLIENT);
const accounts = JSON.parse(process.env.OIDC_ACCOUNTS || '{}');
const issuer = process.env.OIDC_ISSUER;

const provider = new Provider(issuer, {
  clients: [{
    client_id: client.client_id,
    client_secret: client.client_secret,
    redirect_uris: client.redirect_uris,
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  jwks: JSON.parse(process.env.OIDC_JWKS),
  pkce: { methods: ['S256'], required: () => true },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
  conformIdTokenClaims: false,
  features: { devInteractions: { enabled: true } },
  cookies: { keys: ['sunrise-test-provider-cookie-key'] },
  async findAccount(ctx, id) {
    const account = accounts[id] || { email: `${id}@example.test`, groups: [] };
    return {
      accountId: id,
      async claims() {
        return { sub: id, email: account.email, email_verified: true, groups: account.groups };
      },
    };
  },
});
provider.on('server_error', (ctx, err) => console.error('server_error', err));

const server = provider.listen({ fd: Number(process.env.OIDC_FD) }, () => console.log(`ready ${issuer}`));
const stop = () => { server.close(); process.exit(0); };
setTimeout(stop, Number(process.env.OIDC_MAX_LIFETIME_S || 1800) * 1000).unref();
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
