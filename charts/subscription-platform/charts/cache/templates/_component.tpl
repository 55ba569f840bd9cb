{{/* The cache's part of the platform-lib contract (see platform-lib/templates/_config.tpl). */}}

{{- define "cache.component" -}}
apiPort:
  name: grpc
  appProtocol: {{ .Values.service.appProtocol }}
  env: Cache__Port
probes:
  startup:
    httpGet:
      path: /livez
      port: management
  liveness:
    httpGet:
      path: /livez
      port: management
  # grpc.health.v1 on the API port: SERVING while the store answers (Redis reachable).
  readiness:
    grpc:
      port: {{ .Values.containerPorts.api }}
{{- end -}}

{{- define "cache.redisFromSecret" -}}
{{- if and (eq .Values.backend "redis") .Values.redis.existingSecretKey }}true{{ end -}}
{{- end -}}

{{- define "cache.configData" -}}
Cache__Host: "0.0.0.0"
Cache__Backend: {{ .Values.backend | quote }}
Cache__Capacity: {{ .Values.capacity | int64 | quote }}
{{- if .Values.partitions }}
Cache__Partitions: {{ .Values.partitions | quote }}
{{- end }}
Cache__MaxValueBytes: {{ .Values.maxValueBytes | int64 | quote }}
{{- if eq .Values.backend "redis" }}
Cache__KeyPrefix: {{ .Values.redis.keyPrefix | quote }}
{{- if not (include "cache.redisFromSecret" .) }}
Cache__RedisUrl: {{ .Values.redis.url | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{- define "cache.secretEnv" -}}
{{- if include "cache.redisFromSecret" . }}
- name: Cache__RedisUrl
  key: {{ .Values.redis.existingSecretKey }}
{{- else -}}
[]
{{- end }}
{{- end -}}

{{- define "cache.extraEnv" -}}
[]
{{- end -}}

{{- define "cache.volumes" -}}
[]
{{- end -}}

{{- define "cache.volumeMounts" -}}
[]
{{- end -}}

{{/* The flags of K$gxe that a notify-keyspace-events value lacks ("" when none), as the service checks them. */}}
{{- define "cache.missingNotifyFlags" -}}
{{- $flags := replace "A" "g$lshzxetd" . -}}
{{- range $flag := list "K" "$" "g" "x" "e" }}{{ if not (contains $flag $flags) }}{{ $flag }}{{ end }}{{ end -}}
{{- end -}}

{{- define "cache.validateValues" -}}
{{- $memory := eq .Values.backend "memory" -}}
{{- if and $memory (gt (int .Values.replicaCount) 1) (not .Values.autoscaling.enabled) }}
cache.backend: memory keeps entries inside each pod, so {{ .Values.replicaCount }} replicas would each hold a different cache; set backend=redis (with redis.url or redis.existingSecretKey) or replicaCount=1
{{- end }}
{{- if and $memory .Values.autoscaling.enabled }}
cache.autoscaling.enabled: the HorizontalPodAutoscaler adds replicas, which the memory backend cannot share; set backend=redis or autoscaling.enabled=false
{{- end }}
{{- if and (eq .Values.backend "redis") (not .Values.redis.url) (not .Values.redis.existingSecretKey) }}
cache.redis.url: backend redis needs the Redis address: set redis.url, or redis.existingSecretKey (with existingSecret) for a URL with a password
{{- end }}
{{- if and (eq .Values.backend "redis") .Values.redis.url .Values.redis.existingSecretKey }}
cache.redis: set redis.url or redis.existingSecretKey, not both
{{- end }}
{{- $missing := include "cache.missingNotifyFlags" .Values.redis.notifyKeyspaceEvents -}}
{{- if and .Values.redis.notifyKeyspaceEvents $missing }}
cache.redis.notifyKeyspaceEvents: {{ .Values.redis.notifyKeyspaceEvents | quote }} lacks {{ $missing }}: Subscribe (invalidations for near caches) needs K$gxe on every Redis node (K keyspace events, $ strings, g generic commands, x expiry, e eviction; A counts as g$lshzxetd)
{{- end }}
{{- if and .Values.redis.url (not (regexMatch "^(redis|rediss|redis\\+sentinel|redis\\+cluster)://" .Values.redis.url)) }}
cache.redis.url: {{ .Values.redis.url | quote }} must start with redis://, rediss://, redis+sentinel:// or redis+cluster://
{{- end }}
{{- end -}}

{{/* The chart test's checks (platform-lib/templates/_test.tpl). */}}
{{- define "cache.testChecks" -}}
- name: ready (/readyz of the management port)
  url: http://{{ include "platform-lib.fullname" . }}:{{ .Values.service.ports.metrics }}/readyz
  status: 200
- name: the gRPC health check of the API port answers SERVING
  grpcHealth: {{ include "platform-lib.fullname" . }}:{{ .Values.service.ports.api }}
{{- end -}}
