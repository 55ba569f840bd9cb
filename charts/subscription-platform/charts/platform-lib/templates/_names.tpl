{{/*
Names and labels. Every template of the library takes the chart's root context (`.`): a
component is one chart, named by its Chart.yaml (`cache`, `auth`, ...).
*/}}

{{/* The component's name: the chart name unless nameOverride. */}}
{{- define "platform-lib.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Object name: `<release>-<component>`, always, so components of one release find each other by
name (see platform-lib.componentFullname); fullnameOverride replaces it.
*/}}
{{- define "platform-lib.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "platform-lib.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The object name another component of the same release gets: (dict "root" $ "component" "cache"). */}}
{{- define "platform-lib.componentFullname" -}}
{{- printf "%s-%s" .root.Release.Name .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "platform-lib.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels: stable for the life of a release (never add a changing value here). */}}
{{- define "platform-lib.selectorLabels" -}}
app.kubernetes.io/name: {{ include "platform-lib.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Selector labels of another component of the release: (dict "root" $ "component" "auth"). */}}
{{- define "platform-lib.componentSelectorLabels" -}}
app.kubernetes.io/name: {{ .component }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{- define "platform-lib.labels" -}}
helm.sh/chart: {{ include "platform-lib.chart" . }}
{{ include "platform-lib.selectorLabels" . }}
app.kubernetes.io/version: {{ include "platform-lib.imageTag" . | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/component: {{ .Chart.Name }}
app.kubernetes.io/part-of: subscription-platform
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "platform-lib.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "platform-lib.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Image tag: image.tag, else global.imageTag, else the chart's appVersion. */}}
{{- define "platform-lib.imageTag" -}}
{{- $global := .Values.global | default dict -}}
{{- .Values.image.tag | default $global.imageTag | default .Chart.AppVersion | toString -}}
{{- end -}}

{{/* registry/repository:tag or registry/repository@digest; global.imageRegistry wins over image.registry. */}}
{{- define "platform-lib.image" -}}
{{- $global := .Values.global | default dict -}}
{{- $registry := $global.imageRegistry | default .Values.image.registry -}}
{{- $repository := .Values.image.repository -}}
{{- $name := ternary (printf "%s/%s" $registry $repository) $repository (ne $registry "") -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $name .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $name (include "platform-lib.imageTag" .) -}}
{{- end -}}
{{- end -}}

{{- define "platform-lib.imagePullSecrets" -}}
{{- $global := .Values.global | default dict -}}
{{- $secrets := concat ($global.imagePullSecrets | default list) (.Values.image.pullSecrets | default list) | uniq -}}
{{- if $secrets -}}
imagePullSecrets:
  {{- range $secrets }}
  - name: {{ . }}
  {{- end }}
{{- end -}}
{{- end -}}

{{/* The OTLP endpoint: otlp.endpoint, else global.otlpEndpoint (empty: tracing off). */}}
{{- define "platform-lib.otlpEndpoint" -}}
{{- $global := .Values.global | default dict -}}
{{- .Values.otlp.endpoint | default $global.otlpEndpoint | default "" -}}
{{- end -}}

{{/* NOTES.txt of a component installed on its own: how to reach it through port-forward. */}}
{{- define "platform-lib.notes" -}}
{{- if .Values.enabled -}}
{{- $component := include "platform-lib.component" . | fromJson -}}
{{- $name := include "platform-lib.fullname" . -}}
{{ .Chart.Name }} "{{ $name }}" in namespace {{ .Release.Namespace }}.

Port-forward (blocks; run it in its own terminal):
{{- if $component.apiPort }}
  kubectl -n {{ .Release.Namespace }} port-forward svc/{{ $name }} {{ .Values.service.ports.api }}:{{ .Values.service.ports.api }} 9464:{{ .Values.service.ports.metrics }}
{{- else }}
  kubectl -n {{ .Release.Namespace }} port-forward svc/{{ $name }} 9464:{{ .Values.service.ports.metrics }}
{{- end }}
  curl -s localhost:9464/readyz     # readiness, with the failing dependency named
  curl -s localhost:9464/metrics    # Prometheus metrics
Logs: kubectl -n {{ .Release.Namespace }} logs deploy/{{ $name }} -f
{{- else -}}
{{ .Chart.Name }} is disabled (enabled=false): nothing was deployed.
{{- end -}}
{{- end -}}
