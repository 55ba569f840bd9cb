import { createServer, type IncomingHttpHeaders } from 'node:http';
import { closeGracefully, listen } from '@sp/http';

/** A request as the application behind the proxy received it. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

export interface DemoUpstream {
  port: number;
  /** Every request that reached it, oldest first. */
  seen: SeenRequest[];
  close(): Promise<void>;
}

const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The platform's sign-in page (Auth__SignInPageUrl), as the sign-up UI would serve it on the
 * application's host: a one-time password login through the auth service under /sso/, then
 * /sso/signin?rd=<rd>, which sends the browser on to the page it first asked for; or the Keycloak
 * login (/sso/login), which ends there too.
 */
const SIGN_IN_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in</title></head><body>
<form id="phone-form"><input id="phone" autocomplete="tel"><button id="send">Send code</button></form>
<form id="code-form"><input id="code" autocomplete="one-time-code"><button id="verify">Sign in</button></form>
<a id="keycloak" href="#">Sign in with Keycloak</a>
<p id="status"></p>
<script>
const rd = new URLSearchParams(location.search).get('rd') || '/';
const status = document.getElementById('status');
document.getElementById('keycloak').href = '/sso/login?redirectUri=' + encodeURIComponent(rd);
const phone = () => document.getElementById('phone').value;
const post = (path, body, headers) => fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
document.getElementById('phone-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const answer = await post('/sso/otp', { phoneNumber: phone() });
  status.textContent = answer.ok ? 'code sent' : 'refused ' + answer.status;
});
document.getElementById('code-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const answer = await post('/sso/otp/verify', { phoneNumber: phone(), code: document.getElementById('code').value }, { 'x-role-claim': 'subscriber' });
  if (answer.ok) location.assign('/sso/signin?rd=' + encodeURIComponent(rd));
  else status.textContent = 'refused ' + answer.status;
});
</script></body></html>`;

/** The page of the application: what it was told about the user, for the browser to show. */
function appPage(url: string, headers: IncomingHttpHeaders): string {
  const field = (name: string): string => escapeHtml(String(headers[name] ?? ''));
  return `<!doctype html><html><head><meta charset="utf-8"><title>App</title></head><body>
<h1 id="page">${escapeHtml(url)}</h1>
<p id="user">${field('x-auth-request-user')}</p><p id="phone">${field('x-auth-request-phone')}</p>
<p id="groups">${field('x-auth-request-groups')}</p><p id="role">${field('x-auth-request-role')}</p>
</body></html>`;
}

/**
 * The application behind the proxy (plain HTTP on loopback): it keeps every request it receives,
 * serves the sign-in page at /sign-in and any other path as a page naming the identity headers it
 * got (HTML for browsers, JSON otherwise).
 */
export async function startDemoUpstream(): Promise<DemoUpstream> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    req.resume();
    const url = req.url ?? '/';
    if (url.startsWith('/sign-in')) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(SIGN_IN_PAGE);
    } else if ((req.headers.accept ?? '').includes('text/html')) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(appPage(url, req.headers));
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ url }));
    }
  });
  const port = await listen(server, 0, '127.0.0.1');
  return { port, seen, close: () => closeGracefully(server, 1000) };
}
