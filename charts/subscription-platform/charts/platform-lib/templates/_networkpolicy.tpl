{{/*
NetworkPolicy. Ingress: the API port only from the components of this release that call it
(networkPolicy.allowedComponents), the ingress controller for public components, extra peers and
the chart test's Pod; the management port from networkPolicy.metricsFrom and the chart test's Pod
(any source when metricsFrom is empty: it serves metrics and probes, no data). Egress (when networkPolicy.egress.enabled): DNS, the API ports of the components
this one calls, the OTLP collector when tracing is on, and named destinations (Kafka, Redis,
Keycloak...) by port, narrowed to peers when `to` is set.
*/}}
{{- define "platform-lib.ports" -}}
{{- range . }}
- port: {{ . }}
  protocol: TCP
{{- end }}
{{- end -}}

{{- define "platform-lib.networkPolicy" -}}
{{- if and .Values.enabled .Values.networkPolicy.enabled -}}
{{- $np := .Values.networkPolicy -}}
{{- $component := include "platform-lib.component" . | fromJson -}}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "platform-lib.fullname" . }}
  namespace: {{ .Release.Namespace | quote }}
  labels:
    {{- include "platform-lib.labels" . | nindent 4 }}
  {{- with .Values.commonAnnotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  podSelector:
    matchLabels:
      {{- include "platform-lib.selectorLabels" . | nindent 6 }}
  policyTypes:
    - Ingress
    {{- if $np.egress.enabled }}
    - Egress
    {{- end }}
  ingress:
    {{- if $component.apiPort }}
    {{- $ingressController := $np.ingressController | default dict }}
    # The API port.
    - ports:
        - port: {{ $component.apiPort.name }}
          protocol: TCP
      {{- if not $np.allowExternal }}
      from:
        {{- range $np.allowedComponents }}
        - podSelector:
            matchLabels:
              {{- include "platform-lib.componentSelectorLabels" (dict "root" $ "component" .) | nindent 14 }}
        {{- end }}
        {{- if $ingressController.enabled }}
        - namespaceSelector:
            {{- toYaml $ingressController.namespaceSelector | nindent 12 }}
          podSelector:
            {{- toYaml $ingressController.podSelector | nindent 12 }}
        {{- end }}
        {{- with $np.extraIngressFrom }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
        # The chart test's Pod (helm test).
        - {{ include "platform-lib.testPeer" $ | nindent 10 | trim }}
      {{- end }}
    {{- end }}
    # The management port: /metrics for Prometheus, /livez and /readyz.
    - ports:
        - port: management
          protocol: TCP
      {{- with $np.metricsFrom }}
      from:
        {{- toYaml . | nindent 8 }}
        # The chart test's Pod (helm test).
        - {{ include "platform-lib.testPeer" $ | nindent 10 | trim }}
      {{- end }}
  {{- if $np.egress.enabled }}
  egress:
    - ports:
        - port: 53
          protocol: UDP
        - port: 53
          protocol: TCP
      {{- with $np.egress.dns.to }}
      to:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- range $np.egress.toComponents }}
    - ports:
        - port: {{ .port }}
          protocol: TCP
      to:
        - podSelector:
            matchLabels:
              {{- include "platform-lib.componentSelectorLabels" (dict "root" $ "component" .component) | nindent 14 }}
    {{- end }}
    {{- with include "platform-lib.otlpEndpoint" . }}
    {{- $url := urlParse . }}
    {{- $port := regexFind ":[0-9]+$" $url.host | trimPrefix ":" | default (ternary "443" "80" (eq $url.scheme "https")) }}
    # The OpenTelemetry collector (Otlp__Endpoint).
    - ports:
        - port: {{ $port }}
          protocol: TCP
    {{- end }}
    {{- range $name, $destination := $np.egress.destinations }}
    {{- if $destination.enabled }}
    # {{ $name }}
    - ports:
        {{- include "platform-lib.ports" $destination.ports | trim | nindent 8 }}
      {{- with $destination.to }}
      to:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- end }}
    {{- end }}
    {{- with $np.egress.extra }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- end }}
{{- end -}}
{{- end -}}
