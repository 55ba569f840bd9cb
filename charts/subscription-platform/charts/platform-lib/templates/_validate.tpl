{{/*
Values validation: rules across values that the JSON schema cannot state clearly. Collects every
problem (the library's common rules, then the chart's own `<chart>.validateValues`) and fails
once with all of them, one a line, each naming the value to change.
*/}}
{{- define "platform-lib.validateValues" -}}
{{- if .Values.enabled -}}
{{- $messages := list -}}
{{- $messages = concat $messages (include "platform-lib.validateValues.common" . | splitList "\n") -}}
{{- $messages = concat $messages (include (printf "%s.validateValues" .Chart.Name) . | splitList "\n") -}}
{{- $messages = without ($messages | compact) "" -}}
{{- if $messages -}}
{{- printf "\nVALUES VALIDATION (%s):\n  - %s" .Chart.Name (join "\n  - " $messages) | fail -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "platform-lib.validateValues.common" -}}
{{- $chart := .Chart.Name -}}
{{- $secretEnv := include "platform-lib.secretEnv" . | fromYamlArray -}}
{{- if and $secretEnv (not .Values.existingSecret) -}}
{{- $keys := list -}}
{{- range $secretEnv }}{{ $keys = append $keys .key }}{{ end }}
{{ $chart }}.existingSecret: is required; create a Secret in the release namespace holding the keys {{ join ", " $keys }} and set {{ $chart }}.existingSecret to its name (the chart never stores secret values)
{{- end }}
{{- if and .Values.autoscaling.enabled (gt (int .Values.autoscaling.minReplicas) (int .Values.autoscaling.maxReplicas)) }}
{{ $chart }}.autoscaling.minReplicas: {{ .Values.autoscaling.minReplicas }} is greater than autoscaling.maxReplicas {{ .Values.autoscaling.maxReplicas }}
{{- end }}
{{- if and .Values.autoscaling.enabled (not .Values.autoscaling.targetCPUUtilizationPercentage) (not .Values.autoscaling.targetMemoryUtilizationPercentage) }}
{{ $chart }}.autoscaling: set targetCPUUtilizationPercentage or targetMemoryUtilizationPercentage (or both)
{{- end }}
{{- if and .Values.autoscaling.enabled (or (not .Values.resources) (not .Values.resources.requests)) }}
{{ $chart }}.resources.requests: the HorizontalPodAutoscaler scales on utilization of the requests; set them
{{- end }}
{{- if and .Values.caBundle.secretName .Values.caBundle.configMapName }}
{{ $chart }}.caBundle: set secretName or configMapName, not both
{{- end }}
{{- if and .Values.pdb.create (ne (toString .Values.pdb.minAvailable) "") (ne (toString .Values.pdb.maxUnavailable) "") }}
{{ $chart }}.pdb: set minAvailable or maxUnavailable, not both
{{- end }}
{{- if le (int .Values.terminationGracePeriodSeconds) (add (int .Values.preStopSleepSeconds) 2) }}
{{ $chart }}.terminationGracePeriodSeconds: must exceed preStopSleepSeconds + 2 (the service needs time to drain after the preStop pause)
{{- end }}
{{- if and .Values.heap.auto (or (not .Values.resources) (not .Values.resources.limits) (not .Values.resources.limits.memory)) }}
{{ $chart }}.resources.limits.memory: is required while heap.auto is true (NODE_OPTIONS bounds the heap from it); set it or heap.auto=false
{{- else if and .Values.heap.auto (lt (include "platform-lib.memoryMiB" .Values.resources.limits.memory | int64) 128) }}
{{ $chart }}.resources.limits.memory: {{ .Values.resources.limits.memory }} is below 128Mi, too little for a Node.js service
{{- end }}
{{- $graph := .Values.service.graphAnnotations -}}
{{- if and $graph.enabled (not (regexMatch "^[a-z0-9]([a-z0-9._-]{0,62})$" ($graph.name | default ""))) }}
{{ $chart }}.service.graphAnnotations.name: {{ $graph.name | quote }} is not a graph name (lower-case letters, digits, . _ -, at most 63, starting with a letter or digit)
{{- end }}
{{- if and (hasKey .Values "ingress") .Values.ingress.enabled (not .Values.ingress.hostname) }}
{{ $chart }}.ingress.hostname: is required when ingress.enabled is true
{{- end }}
{{- end -}}

{{/* Problem lines for empty required values: (dict "chart" "auth" "values" (dict "oidc.realm" .Values.oidc.realm ...)). */}}
{{- define "platform-lib.validateRequired" -}}
{{- range $path, $value := .values }}
{{- if not $value }}
{{ $.chart }}.{{ $path }}: is required
{{- end }}
{{- end }}
{{- end -}}

{{/* Problem lines for set values that are not http(s) URLs: (dict "chart" "auth" "values" (dict "publicBaseUrl" ...)). */}}
{{- define "platform-lib.validateHttpUrls" -}}
{{- range $path, $value := .values }}
{{- if and $value (not (regexMatch "^https?://[^\\s/?#]+" $value)) }}
{{ $.chart }}.{{ $path }}: {{ $value | quote }} is not an http:// or https:// URL
{{- end }}
{{- end }}
{{- end -}}

{{/* Problem lines for a key-value store URL: (dict "chart" "webhooks" "store" .Values.store "replicas" (bool)). */}}
{{- define "platform-lib.validateStore" -}}
{{- $store := .store -}}
{{- if and (not $store.url) (not $store.existingSecretKey) }}
{{ .chart }}.store.url: is required: redis://host:6379 (or store.existingSecretKey for a URL with a password; memory:// for a single replica)
{{- else if and $store.url $store.existingSecretKey }}
{{ .chart }}.store: set store.url or store.existingSecretKey, not both
{{- else if and $store.url (not (regexMatch "^(redis|rediss|memory)://" $store.url)) }}
{{ .chart }}.store.url: {{ $store.url | quote }} must start with redis://, rediss:// or memory://
{{- else if and $store.url (hasPrefix "memory:" $store.url) .replicas }}
{{ .chart }}.store.url: memory:// keeps the data inside each pod, which more than one replica (replicaCount > 1 or autoscaling) cannot share; use a redis:// store
{{- end }}
{{- end -}}

{{/* More than one pod may run: replicaCount > 1 or the HPA. */}}
{{- define "platform-lib.multipleReplicas" -}}
{{- if or (gt (int .Values.replicaCount) 1) .Values.autoscaling.enabled }}true{{ end -}}
{{- end -}}

{{/* A host:port address of the cache service: cache.url, else this release's cache. */}}
{{- define "platform-lib.cacheAddress" -}}
{{- .Values.cache.url | default (printf "%s:7777" (include "platform-lib.componentFullname" (dict "root" . "component" "cache"))) -}}
{{- end -}}

{{/* Default handlers of the probes: the management port's /livez and /readyz. */}}
{{- define "platform-lib.managementProbes" -}}
startup:
  httpGet:
    path: /livez
    port: management
liveness:
  httpGet:
    path: /livez
    port: management
readiness:
  httpGet:
    path: /readyz
    port: management
{{- end -}}
