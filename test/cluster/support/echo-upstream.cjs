// Runs inside the cluster, in a pod of its own: the application behind the forward-auth proxy
// (docs/forward-auth/nginx.conf). It answers every request on port 8080 with 200 and prints one
// line of JSON per request, {"method", "url", "headers"} as it received them, so the suite reads
// from the pod's log what reached it, and with which identity.
'use strict';
const http = require('node:http');

http
  .createServer((req, res) => {
    console.log(JSON.stringify({ method: req.method, url: req.url, headers: req.headers }));
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ url: req.url }));
  })
  .listen(8080, '0.0.0.0');
