{{/*
The component's chart test (`helm test <release>`, after an install or an upgrade): a Pod that
checks the component is ready and answers one real request through its Service, each check as
`<chart>.testChecks` lists it (YAML list):

  - name: what is checked (printed with the outcome)
    url: http(s)://<service>:<port>/<path>; ${VAR} is replaced by the variable, URL-encoded
    method, headers (${VAR} replaced as is), body: the request (GET, none, none by default)
    status: the answer's status expected; bodyIncludes: a text the answer's body must hold
    insecure: true to accept the certificate auth serves (self-signed unless tls.existingSecret;
              the check is the answer, not the certificate)
    env: the variables of <chart>.secretEnv the check uses, read from existingSecret
  - name: ...
    grpcHealth: <service>:<port>  (grpc.health.v1.Health/Check must answer SERVING)

The Pod runs the component's own image (a node the cluster already pulled, no other image to
mirror) with the component's security contexts (Pod Security restricted), the script below with
node, no service account token. Its labels are not the component's selector labels (the Service
never routes to it); the component's NetworkPolicy lets it in by its `subscription-platform.io/test`
label (platform-lib.testPeer). A passing test Pod is deleted; a failing one stays for its logs.
A check whose connection is refused is tried again every second for up to 30 s from the Pod's
start (ROUTE_WAIT_MS): right after `helm install --wait` the Pods are ready, but kube-proxy may not
route the new Service to them yet (it refuses connections to a Service it knows no endpoints of).
*/}}
{{- define "platform-lib.testPeer" -}}
podSelector:
  matchLabels:
    app.kubernetes.io/instance: {{ .Release.Name }}
    subscription-platform.io/test: {{ include "platform-lib.name" . }}
{{- end -}}

{{- define "platform-lib.testPod" -}}
{{- if .Values.enabled -}}
{{- $checks := include (printf "%s.testChecks" .Chart.Name) . | fromYamlArray -}}
{{- $wanted := list -}}
{{- range $checks }}{{ $wanted = concat $wanted (.env | default list) }}{{ end -}}
{{- $env := list (dict "name" "CHECKS" "value" (toJson $checks)) -}}
{{- range include "platform-lib.secretEnv" . | fromYamlArray -}}
{{- if has .name $wanted -}}
{{- $env = append $env (dict "name" .name "valueFrom" (dict "secretKeyRef" (dict "name" $.Values.existingSecret "key" .key))) -}}
{{- end -}}
{{- end -}}
apiVersion: v1
kind: Pod
metadata:
  name: {{ include "platform-lib.fullname" . | trunc 58 | trimSuffix "-" }}-test
  namespace: {{ .Release.Namespace | quote }}
  labels:
    helm.sh/chart: {{ include "platform-lib.chart" . }}
    app.kubernetes.io/instance: {{ .Release.Name }}
    app.kubernetes.io/component: test
    app.kubernetes.io/part-of: subscription-platform
    app.kubernetes.io/managed-by: {{ .Release.Service }}
    subscription-platform.io/test: {{ include "platform-lib.name" . }}
  annotations:
    helm.sh/hook: test
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  restartPolicy: Never
  automountServiceAccountToken: false
  {{- with include "platform-lib.imagePullSecrets" . }}
  {{- . | nindent 2 }}
  {{- end }}
  {{- if .Values.podSecurityContext.enabled }}
  securityContext:
    {{- omit .Values.podSecurityContext "enabled" | toYaml | nindent 4 }}
  {{- end }}
  containers:
    - name: test
      image: {{ include "platform-lib.image" . | quote }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      {{- if .Values.containerSecurityContext.enabled }}
      securityContext:
        {{- omit .Values.containerSecurityContext "enabled" | toYaml | nindent 8 }}
      {{- end }}
      command: ["node", "-e", {{ include "platform-lib.testScript" . | toJson }}]
      env:
        {{- toYaml $env | nindent 8 }}
      resources:
        requests:
          cpu: 10m
          memory: 48Mi
        limits:
          memory: 128Mi
{{- end -}}
{{- end -}}

{{/* The checks' runner: node's own http, https and http2, nothing installed. Prints a line per check; exits 1 when one failed. */}}
{{- define "platform-lib.testScript" -}}
'use strict';
const http = require('node:http');
const https = require('node:https');
const http2 = require('node:http2');
const TIMEOUT_MS = 10000;
const ROUTE_WAIT_MS = Number(process.env.ROUTE_WAIT_MS || 30000);
const started = Date.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** The check, tried again while its connection is refused, until ROUTE_WAIT_MS after the start. */
async function untilRouted(check, run) {
  for (;;) {
    try {
      return await run(check);
    } catch (error) {
      if (error.code !== 'ECONNREFUSED' || Date.now() - started >= ROUTE_WAIT_MS) throw error;
      await sleep(1000);
    }
  }
}
const expand = (text, encode) => String(text).replace(/\$\{(\w+)\}/g, (_, name) => (encode ? encodeURIComponent(process.env[name] || '') : process.env[name] || ''));
function request(check) {
  const url = new URL(expand(check.url, true));
  const headers = Object.fromEntries(Object.entries(check.headers || {}).map(([key, value]) => [key, expand(value, false)]));
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, { method: check.method || 'GET', headers, timeout: TIMEOUT_MS, rejectUnauthorized: !check.insecure }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within ' + TIMEOUT_MS + ' ms')));
    req.on('error', reject);
    req.end(check.body === undefined ? undefined : check.body);
  });
}
async function httpCheck(check) {
  const answer = await request(check);
  const problems = [];
  if (answer.status !== check.status) problems.push('status ' + answer.status + ', expected ' + check.status);
  if (check.bodyIncludes && !answer.body.includes(check.bodyIncludes)) problems.push('the body lacks ' + JSON.stringify(check.bodyIncludes));
  if (problems.length > 0) throw new Error(problems.join('; ') + ': ' + answer.body.slice(0, 300));
  return 'status ' + answer.status;
}
function grpcHealth(address) {
  return new Promise((resolve, reject) => {
    const session = http2.connect('http://' + address);
    const fail = (error) => {
      session.destroy();
      reject(error);
    };
    session.on('error', fail);
    session.setTimeout(TIMEOUT_MS, () => fail(new Error('no answer within ' + TIMEOUT_MS + ' ms')));
    const call = session.request({ ':method': 'POST', ':path': '/grpc.health.v1.Health/Check', 'content-type': 'application/grpc', te: 'trailers' });
    const chunks = [];
    let status;
    call.on('response', (headers) => (status = headers['grpc-status'] || status));
    call.on('trailers', (trailers) => (status = trailers['grpc-status']));
    call.on('data', (chunk) => chunks.push(chunk));
    call.on('error', fail);
    call.on('end', () => {
      session.close();
      // An empty HealthCheckRequest (uncompressed, length 0) asked; SERVING is field 1 = 1 (08 01).
      const serving = status === '0' && Buffer.concat(chunks).subarray(5).equals(Buffer.from([8, 1]));
      if (serving) resolve('SERVING');
      else reject(new Error('grpc-status ' + status + ', message ' + Buffer.concat(chunks).toString('hex')));
    });
    call.end(Buffer.alloc(5));
  });
}
(async () => {
  let failed = 0;
  for (const check of JSON.parse(process.env.CHECKS)) {
    try {
      const outcome = await untilRouted(check, (c) => (c.grpcHealth ? grpcHealth(c.grpcHealth) : httpCheck(c)));
      console.log('ok     ' + check.name + ': ' + outcome);
    } catch (error) {
      failed++;
      console.log('FAILED ' + check.name + ': ' + error.message);
    }
  }
  process.exit(failed === 0 ? 0 : 1);
})();
{{- end -}}
