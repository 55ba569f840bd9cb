{{/* Ingress for the public components (auth, webhooks), behind ingress.enabled. */}}
{{- define "platform-lib.ingress" -}}
{{- if and .Values.enabled .Values.ingress.enabled -}}
{{- $component := include "platform-lib.component" . | fromJson -}}
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: {{ include "platform-lib.fullname" . }}
  namespace: {{ .Release.Namespace | quote }}
  labels:
    {{- include "platform-lib.labels" . | nindent 4 }}
  {{- if or .Values.ingress.annotations .Values.commonAnnotations }}
  annotations:
    {{- with .Values.commonAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
    {{- with .Values.ingress.annotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- end }}
spec:
  {{- with .Values.ingress.ingressClassName }}
  ingressClassName: {{ . | quote }}
  {{- end }}
  {{- if .Values.ingress.tlsSecret }}
  tls:
    - hosts:
        - {{ .Values.ingress.hostname | quote }}
      secretName: {{ .Values.ingress.tlsSecret | quote }}
  {{- end }}
  rules:
    - host: {{ .Values.ingress.hostname | quote }}
      http:
        paths:
          - path: {{ .Values.ingress.path }}
            pathType: {{ .Values.ingress.pathType }}
            backend:
              service:
                name: {{ include "platform-lib.fullname" . }}
                port:
                  name: {{ $component.apiPort.name }}
{{- end -}}
{{- end -}}
