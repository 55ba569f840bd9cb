{{/* The graph controller's part of the platform-lib contract (see platform-lib/templates/_config.tpl). */}}

{{- define "graph-controller.component" -}}
probes:
  {{- include "platform-lib.managementProbes" . | nindent 2 }}
{{- end -}}

{{- define "graph-controller.leaseName" -}}
{{- .Values.leaderElection.leaseName | default (include "platform-lib.fullname" .) -}}
{{- end -}}

{{- define "graph-controller.configData" -}}
Registry__Url: {{ .Values.registry.url | default (printf "http://%s:5145" (include "platform-lib.componentFullname" (dict "root" . "component" "graph-registry"))) | quote }}
Registry__TimeoutMs: {{ .Values.registry.timeoutMs | int64 | quote }}
{{- with .Values.watchNamespaces }}
Controller__Namespaces: {{ join "," . | quote }}
{{- end }}
Controller__ClusterDomain: {{ .Values.clusterDomain | quote }}
Controller__ResyncSeconds: {{ .Values.resyncSeconds | int64 | quote }}
Controller__WatchIdleSeconds: {{ .Values.watchIdleSeconds | int64 | quote }}
Controller__BackoffBaseMs: {{ .Values.backoff.baseMs | int64 | quote }}
Controller__BackoffMaxMs: {{ .Values.backoff.maxMs | int64 | quote }}
Controller__LeaseName: {{ include "graph-controller.leaseName" . | quote }}
Controller__LeaseDurationSeconds: {{ .Values.leaderElection.leaseDurationSeconds | int64 | quote }}
Controller__RenewDeadlineSeconds: {{ .Values.leaderElection.renewDeadlineSeconds | int64 | quote }}
Controller__RetryPeriodSeconds: {{ .Values.leaderElection.retryPeriodSeconds | int64 | quote }}
{{- end -}}

{{- define "graph-controller.secretEnv" -}}
- name: Registry__ApiKey
  key: {{ .Values.secretKeys.registryApiKey }}
{{- end -}}

{{/* The pod's name is its Lease identity; the Lease lives in the pod's namespace. */}}
{{- define "graph-controller.extraEnv" -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: Controller__LeaseNamespace
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- end -}}

{{- define "graph-controller.volumes" -}}
[]
{{- end -}}

{{- define "graph-controller.volumeMounts" -}}
[]
{{- end -}}

{{- define "graph-controller.validateValues" -}}
{{- $le := .Values.leaderElection -}}
{{- if ge (int $le.renewDeadlineSeconds) (int $le.leaseDurationSeconds) }}
graph-controller.leaderElection.renewDeadlineSeconds: must be less than leaderElection.leaseDurationSeconds
{{- end }}
{{- if ge (int $le.retryPeriodSeconds) (int $le.renewDeadlineSeconds) }}
graph-controller.leaderElection.retryPeriodSeconds: must be less than leaderElection.renewDeadlineSeconds
{{- end }}
{{- if gt (int .Values.backoff.baseMs) (int .Values.backoff.maxMs) }}
graph-controller.backoff.maxMs: must not be less than backoff.baseMs
{{- end }}
{{- include "platform-lib.validateHttpUrls" (dict "chart" "graph-controller" "values" (dict "registry.url" .Values.registry.url)) }}
{{- if not .Values.serviceAccount.automountServiceAccountToken }}
graph-controller.serviceAccount.automountServiceAccountToken: must be true: the controller talks to the Kubernetes API with its service account
{{- end }}
{{- end -}}

{{/* The chart test's checks (platform-lib/templates/_test.tpl). */}}
{{- define "graph-controller.testChecks" -}}
- name: ready (/readyz of the management port)
  url: http://{{ include "platform-lib.fullname" . }}:{{ .Values.service.ports.metrics }}/readyz
  status: 200
- name: its metrics, with the build-info gauge
  url: http://{{ include "platform-lib.fullname" . }}:{{ .Values.service.ports.metrics }}/metrics
  status: 200
  bodyIncludes: subscription_platform_build_info
{{- end -}}
