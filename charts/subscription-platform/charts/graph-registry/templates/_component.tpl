{{/* The graph registry's part of the platform-lib contract (see platform-lib/templates/_config.tpl). */}}

{{- define "graph-registry.component" -}}
apiPort:
  name: http
  appProtocol: http
  env: Registry__Port
probes:
  {{- include "platform-lib.managementProbes" . | nindent 2 }}
{{- end -}}

{{- define "graph-registry.configData" -}}
Registry__Host: "0.0.0.0"
Registry__SchemaCheckTimeoutMs: {{ .Values.schemaCheck.timeoutMs | quote }}
Registry__SchemaWorkerMemoryMb: {{ .Values.schemaCheck.workerMemoryMb | quote }}
Registry__CdnTarget: {{ .Values.cdn.target | quote }}
{{- if not .Values.store.existingSecretKey }}
STORE_URL: {{ .Values.store.url | quote }}
{{- end }}
{{- end -}}

{{- define "graph-registry.secretEnv" -}}
- name: MONITOR_API_KEY
  key: {{ .Values.secretKeys.monitorApiKey }}
{{- with .Values.store.existingSecretKey }}
- name: STORE_URL
  key: {{ . }}
{{- end }}
{{- with .Values.cdn.existingSecretKey }}
- name: Registry__CdnKeys
  key: {{ . }}
{{- end }}
{{- end -}}

{{- define "graph-registry.extraEnv" -}}
[]
{{- end -}}

{{- define "graph-registry.volumes" -}}
[]
{{- end -}}

{{- define "graph-registry.volumeMounts" -}}
[]
{{- end -}}

{{- define "graph-registry.validateValues" -}}
{{- include "platform-lib.validateStore" (dict "chart" "graph-registry" "store" .Values.store "replicas" (include "platform-lib.multipleReplicas" .)) }}
{{- if and .Values.hiveGateway.enabled (not .Values.cdn.existingSecretKey) }}
graph-registry.cdn.existingSecretKey: is required while hiveGateway.enabled is true (the gateway reads the supergraph with a CDN key; without keys the registry refuses every CDN request)
{{- end }}
{{- if and .Values.hiveGateway.enabled (not (regexMatch "^[0-9]+(ms|s|m|h)$" (toString .Values.hiveGateway.pollingInterval))) }}
graph-registry.hiveGateway.pollingInterval: {{ .Values.hiveGateway.pollingInterval | quote }} is not a duration such as 10s or 1m
{{- end }}
{{- end -}}

{{/* The chart test's checks (platform-lib/templates/_test.tpl). */}}
{{- define "graph-registry.testChecks" -}}
- name: ready (/readyz of the management port)
  url: http://{{ include "platform-lib.fullname" . }}:{{ .Values.service.ports.metrics }}/readyz
  status: 200
- name: the graph list, asked with the API key
  url: http://{{ include "platform-lib.fullname" . }}:{{ .Values.service.ports.api }}/
  headers:
    x-api-key: ${MONITOR_API_KEY}
  env: [MONITOR_API_KEY]
  status: 200
  bodyIncludes: '"graphs"'
{{- end -}}
