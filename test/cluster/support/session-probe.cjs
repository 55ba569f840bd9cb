// Runs inside a pod of the upgrade suite: GET /auth of URL (auth's Service) with each session
// cookie of COOKIES (a JSON list of TokenId values) in turn, every 100 ms, each over a new
// connection, so every request goes through the Service's routing to whichever auth pod is ready.
// A session that answers anything but 200 counts as failed. Prints {"ok":N,"failed":[...]} twice a
// second; the suite reads the last line. Auth's certificate is the suite's self-signed one: the
// probe checks the answers, not the certificate.
'use strict';
const https = require('node:https');

const url = process.env.URL;
const cookies = JSON.parse(process.env.COOKIES);
let ok = 0;
const failed = [];

function check(cookie) {
  return new Promise((resolve) => {
    const request = https.get(url, { headers: { cookie: `TokenId=${cookie}` }, rejectUnauthorized: false, agent: false, timeout: 2000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200 ? 'ok' : `status ${response.statusCode}`);
    });
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', (error) => resolve(error.code || error.message));
  });
}

setInterval(() => console.log(JSON.stringify({ ok, failed })), 500);
(async () => {
  for (let turn = 0; ; turn++) {
    const outcome = await check(cookies[turn % cookies.length]);
    if (outcome === 'ok') ok++;
    else failed.push(`${new Date().toISOString()} session ${turn % cookies.length}: ${outcome}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
})();
