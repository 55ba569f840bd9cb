// Runs inside the cluster (a pod of its own, or `kubectl exec` in a component's pod): one TCP
// connection to each host:port of the JSON list in its first argument, side by side, and one line
// of JSON: {"host:port": "connected" | "timeout" | "<error code>"}. A NetworkPolicy that denies
// drops the SYN, so a denied connection times out; a name that does not resolve says ENOTFOUND.
'use strict';
const net = require('node:net');

const targets = JSON.parse(process.argv[1]);
const TIMEOUT_MS = 4000;

function attempt(target) {
  const colon = target.lastIndexOf(':');
  return new Promise((resolve) => {
    const socket = net.connect({ host: target.slice(0, colon), port: Number(target.slice(colon + 1)) });
    const done = (outcome) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => done('timeout'), TIMEOUT_MS);
    socket.once('connect', () => done('connected'));
    socket.once('error', (error) => done(error.code ?? error.message));
  });
}

Promise.all(targets.map(attempt)).then((outcomes) => {
  console.log(JSON.stringify(Object.fromEntries(targets.map((target, i) => [target, outcomes[i]]))));
});
