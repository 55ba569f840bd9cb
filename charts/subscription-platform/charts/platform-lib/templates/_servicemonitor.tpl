{{/*
ServiceMonitor (prometheus-operator), behind serviceMonitor.enabled. honorLabels keeps the
`service` label every service puts on its own metrics (cache, auth, ...), which the dashboards and
alerts select on; without it Prometheus would rename it exported_service, because a
ServiceMonitor target gets a `service` label of its own (the Kubernetes Service's name).
*/}}
{{- define "platform-lib.serviceMonitor" -}}
{{- if and .Values.enabled .Values.serviceMonitor.enabled -}}
{{- $sm := .Values.serviceMonitor -}}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "platform-lib.fullname" . }}
  namespace: {{ $sm.namespace | default .Release.Namespace | quote }}
  labels:
    {{- include "platform-lib.labels" . | nindent 4 }}
    {{- with $sm.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- if or $sm.annotations .Values.commonAnnotations }}
  annotations:
    {{- with .Values.commonAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
    {{- with $sm.annotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- end }}
spec:
  jobLabel: app.kubernetes.io/name
  selector:
    matchLabels:
      {{- include "platform-lib.selectorLabels" . | nindent 6 }}
  namespaceSelector:
    matchNames:
      - {{ .Release.Namespace | quote }}
  endpoints:
    - port: metrics
      path: /metrics
      scheme: http
      interval: {{ $sm.interval }}
      scrapeTimeout: {{ $sm.scrapeTimeout }}
      honorLabels: {{ $sm.honorLabels }}
      {{- with $sm.relabelings }}
      relabelings:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $sm.metricRelabelings }}
      metricRelabelings:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end -}}
{{- end -}}
