{{/*
The component's Service: the API port (named after its protocol, with appProtocol) and the
management port `metrics` (/metrics, /livez, /readyz). service.graphAnnotations adds the graph
controller's opt-in annotations (graph-registry.io/*) so the controller registers this Service as
a GraphQL endpoint: an example for the platform's GraphQL services, off by default because none of
these components serves GraphQL itself.
*/}}
{{- define "platform-lib.service" -}}
{{- if .Values.enabled -}}
{{- $component := include "platform-lib.component" . | fromJson -}}
{{- $graph := .Values.service.graphAnnotations -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "platform-lib.fullname" . }}
  namespace: {{ .Release.Namespace | quote }}
  labels:
    {{- include "platform-lib.labels" . | nindent 4 }}
  {{- if or .Values.service.annotations .Values.commonAnnotations $graph.enabled }}
  annotations:
    {{- with .Values.commonAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
    {{- with .Values.service.annotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
    {{- if $graph.enabled }}
    graph-registry.io/name: {{ $graph.name | quote }}
    {{- with $graph.port }}
    graph-registry.io/port: {{ . | toString | quote }}
    {{- end }}
    graph-registry.io/path: {{ $graph.path | quote }}
    graph-registry.io/scheme: {{ $graph.scheme | quote }}
    {{- end }}
  {{- end }}
spec:
  type: {{ .Values.service.type }}
  {{- if and (eq .Values.service.type "ClusterIP") .Values.service.clusterIP }}
  clusterIP: {{ .Values.service.clusterIP }}
  {{- end }}
  {{- if .Values.service.sessionAffinity }}
  sessionAffinity: {{ .Values.service.sessionAffinity }}
  {{- end }}
  ports:
    {{- with $component.apiPort }}
    - name: {{ .name }}
      port: {{ $.Values.service.ports.api }}
      targetPort: {{ .name }}
      protocol: TCP
      {{- with .appProtocol }}
      appProtocol: {{ . }}
      {{- end }}
    {{- end }}
    - name: metrics
      port: {{ .Values.service.ports.metrics }}
      targetPort: management
      protocol: TCP
      appProtocol: http
  selector:
    {{- include "platform-lib.selectorLabels" . | nindent 4 }}
{{- end -}}
{{- end -}}

{{- define "platform-lib.serviceAccount" -}}
{{- if and .Values.enabled .Values.serviceAccount.create -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "platform-lib.serviceAccountName" . }}
  namespace: {{ .Release.Namespace | quote }}
  labels:
    {{- include "platform-lib.labels" . | nindent 4 }}
  {{- if or .Values.serviceAccount.annotations .Values.commonAnnotations }}
  annotations:
    {{- with .Values.commonAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
    {{- with .Values.serviceAccount.annotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- end }}
automountServiceAccountToken: {{ .Values.serviceAccount.automountServiceAccountToken }}
{{- end -}}
{{- end -}}

{{/* Plain settings only: secrets come from the existing Secret through secretKeyRef. */}}
{{- define "platform-lib.configMap" -}}
{{- if .Values.enabled -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "platform-lib.fullname" . }}
  namespace: {{ .Release.Namespace | quote }}
  labels:
    {{- include "platform-lib.labels" . | nindent 4 }}
  {{- with .Values.commonAnnotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
data:
  {{- include "platform-lib.configData" . | nindent 2 }}
{{- end -}}
{{- end -}}
