// Sets up the direct grant flow the auth service's OTP login uses, idempotently, through Keycloak's
// admin REST API (the master realm's admin):
//
//   node verified-phone-grant.mjs <keycloak url> <realm> <master admin> <master password>
//
// The flow "verified phone direct grant" has one execution, Username Validation
// (direct-grant-validate-username: the user exists, is enabled and not locked out) and asks for no
// credential. It is bound as the direct grant flow override of the auth service's own clients only
// (platform-auth, platform-auth-short-lived); every other client keeps the realm's direct grant flow
// (username and password). The auth service has verified the phone number with a one-time password
// before it asks; Keycloak still authenticates the client by its secret. The same clients get a
// `groups` claim (group names) in their ID tokens only, from which the service checks a returning
// user's role without an admin API call (access tokens are unchanged). Why a script and not
// realm.json: a realm file that lists any authentication flow must list all of them (Keycloak then
// creates none of its built-in flows, and the import fails), so the flow is added after the import.
const [url, realm, username, password] = process.argv.slice(2);
if (!password) {
  console.error('usage: verified-phone-grant.mjs <keycloak url> <realm> <master admin> <master password>');
  process.exit(2);
}

const FLOW_ALIAS = 'verified phone direct grant';
const CLIENTS = ['platform-auth', 'platform-auth-short-lived'];
const DESCRIPTION =
  "Direct grant for the auth service's clients: the phone number was verified with a one-time password by the service, " +
  'so only the username is checked (exists, enabled, not locked out); no password is set or hashed per login.';

const tokenResponse = await fetch(`${url}/realms/master/protocol/openid-connect/token`, {
  method: 'POST',
  body: new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', username, password }),
});
if (!tokenResponse.ok) throw new Error(`master admin token: ${tokenResponse.status}`);
const { access_token: token } = await tokenResponse.json();
const admin = `${url}/admin/realms/${encodeURIComponent(realm)}`;

async function call(method, path, body) {
  const response = await fetch(`${admin}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  const text = await response.text();
  return text === '' ? undefined : JSON.parse(text);
}

const flowPath = `/authentication/flows/${encodeURIComponent(FLOW_ALIAS)}`;
let flow = (await call('GET', '/authentication/flows')).find((candidate) => candidate.alias === FLOW_ALIAS);
if (flow === undefined) {
  await call('POST', '/authentication/flows', { alias: FLOW_ALIAS, description: DESCRIPTION, providerId: 'basic-flow', topLevel: true, builtIn: false });
  flow = (await call('GET', '/authentication/flows')).find((candidate) => candidate.alias === FLOW_ALIAS);
}
let executions = await call('GET', `${flowPath}/executions`);
if (!executions.some((execution) => execution.providerId === 'direct-grant-validate-username')) {
  await call('POST', `${flowPath}/executions/execution`, { provider: 'direct-grant-validate-username' });
  executions = await call('GET', `${flowPath}/executions`);
}
for (const execution of executions) {
  if (execution.requirement !== 'REQUIRED') await call('PUT', `${flowPath}/executions`, { ...execution, requirement: 'REQUIRED' });
}
const GROUPS_MAPPER = {
  name: 'groups in the ID token',
  protocol: 'openid-connect',
  protocolMapper: 'oidc-group-membership-mapper',
  config: { 'claim.name': 'groups', 'full.path': 'false', 'id.token.claim': 'true', 'access.token.claim': 'false', 'userinfo.token.claim': 'false', 'introspection.token.claim': 'false' },
};
const clientNamed = async (clientId) => {
  const [client] = await call('GET', `/clients?clientId=${encodeURIComponent(clientId)}`);
  if (client === undefined) throw new Error(`no client ${clientId} in realm ${realm}`);
  return client;
};
for (const clientId of CLIENTS) {
  const client = await clientNamed(clientId);
  if (client.authenticationFlowBindingOverrides?.direct_grant !== flow.id) {
    await call('PUT', `/clients/${client.id}`, { ...client, authenticationFlowBindingOverrides: { ...client.authenticationFlowBindingOverrides, direct_grant: flow.id } });
  }
  // Read again after the update, which carries the mappers it was given.
  if (!((await clientNamed(clientId)).protocolMappers ?? []).some((mapper) => mapper.name === GROUPS_MAPPER.name)) {
    await call('POST', `/clients/${client.id}/protocol-mappers/models`, GROUPS_MAPPER);
  }
}
console.log(`${FLOW_ALIAS} and the ID token's groups: set on ${CLIENTS.join(', ')} in realm ${realm}`);
