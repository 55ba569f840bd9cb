{{/*
The component's Deployment. Probes: the management port's /livez and /readyz unless the chart's
component descriptor says otherwise (the cache answers readiness with the gRPC health protocol);
each probe can be disabled or replaced whole (custom*Probe). The pod template carries the
checksum of the ConfigMap, so a configuration change rolls the pods. A CA bundle (caBundle, from
a Secret or a ConfigMap) is mounted read-only and named by NODE_EXTRA_CA_CERTS: Node then trusts
those CAs for every outbound TLS connection, besides its own roots.
*/}}
{{- define "platform-lib.caBundlePath" -}}/etc/ssl/subscription-platform/ca-bundle.pem{{- end -}}

{{- define "platform-lib.caBundleVolume" -}}
{{- $ca := .Values.caBundle -}}
{{- $items := list (dict "key" $ca.key "path" (base (include "platform-lib.caBundlePath" .))) -}}
{{- if $ca.secretName -}}
{{- toYaml (dict "name" "ca-bundle" "secret" (dict "secretName" $ca.secretName "items" $items)) -}}
{{- else if $ca.configMapName -}}
{{- toYaml (dict "name" "ca-bundle" "configMap" (dict "name" $ca.configMapName "items" $items)) -}}
{{- end -}}
{{- end -}}

{{- define "platform-lib.probe" -}}
{{- $values := index .root.Values (printf "%sProbe" .kind) -}}
{{- $custom := index .root.Values (printf "custom%sProbe" (title .kind)) -}}
{{- if $custom -}}
{{- toYaml $custom -}}
{{- else -}}
{{- $probe := omit $values "enabled" -}}
{{- toYaml (merge $probe .handler) -}}
{{- end -}}
{{- end -}}

{{- define "platform-lib.deployment" -}}
{{- if .Values.enabled -}}
{{- include "platform-lib.validateValues" . -}}
{{- $component := include "platform-lib.component" . | fromJson -}}
{{- $secretEnv := include "platform-lib.secretEnv" . | fromYamlArray -}}
{{- $extraEnv := include (printf "%s.extraEnv" .Chart.Name) . | fromYamlArray -}}
{{- $volumes := include (printf "%s.volumes" .Chart.Name) . | fromYamlArray -}}
{{- $volumeMounts := include (printf "%s.volumeMounts" .Chart.Name) . | fromYamlArray -}}
{{- $env := list -}}
{{- with include "platform-lib.nodeOptions" . -}}
{{- $env = append $env (dict "name" "NODE_OPTIONS" "value" .) -}}
{{- end -}}
{{- range $secretEnv -}}
{{- $env = append $env (dict "name" .name "valueFrom" (dict "secretKeyRef" (dict "name" $.Values.existingSecret "key" .key))) -}}
{{- end -}}
{{- $caBundleVolume := include "platform-lib.caBundleVolume" . -}}
{{- if $caBundleVolume -}}
{{- $env = append $env (dict "name" "NODE_EXTRA_CA_CERTS" "value" (include "platform-lib.caBundlePath" .)) -}}
{{- end -}}
{{- $env = concat $env $extraEnv (.Values.extraEnv | default list) -}}
apiVersion: apps/v1
kind: Deployment
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
  {{- if not .Values.autoscaling.enabled }}
  replicas: {{ .Values.replicaCount }}
  {{- end }}
  revisionHistoryLimit: {{ .Values.revisionHistoryLimit }}
  {{- with .Values.updateStrategy }}
  strategy:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "platform-lib.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "platform-lib.labels" . | nindent 8 }}
        {{- with .Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        checksum/config: {{ include "platform-lib.configData" . | sha256sum }}
        {{- with .Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "platform-lib.serviceAccountName" . }}
      automountServiceAccountToken: {{ .Values.serviceAccount.automountServiceAccountToken }}
      {{- with include "platform-lib.imagePullSecrets" . }}
      {{- . | nindent 6 }}
      {{- end }}
      {{- with .Values.priorityClassName }}
      priorityClassName: {{ . | quote }}
      {{- end }}
      {{- if .Values.podSecurityContext.enabled }}
      securityContext:
        {{- omit .Values.podSecurityContext "enabled" | toYaml | nindent 8 }}
      {{- end }}
      terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
      {{- if .Values.affinity }}
      affinity:
        {{- toYaml .Values.affinity | nindent 8 }}
      {{- else if .Values.podAntiAffinityPreset }}
      affinity:
        podAntiAffinity:
          {{- if eq .Values.podAntiAffinityPreset "hard" }}
          requiredDuringSchedulingIgnoredDuringExecution:
            - topologyKey: kubernetes.io/hostname
              labelSelector:
                matchLabels:
                  {{- include "platform-lib.selectorLabels" . | nindent 18 }}
          {{- else }}
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: kubernetes.io/hostname
                labelSelector:
                  matchLabels:
                    {{- include "platform-lib.selectorLabels" . | nindent 20 }}
          {{- end }}
      {{- end }}
      {{- with .Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.topologySpreadConstraints }}
      {{- /* A constraint without a labelSelector counts no pods at all (the API server only warns):
      one without gets the component's own selector labels, so it spreads this component's pods. */}}
      {{- $constraints := list }}
      {{- $own := dict "labelSelector" (dict "matchLabels" (include "platform-lib.selectorLabels" $ | fromYaml)) }}
      {{- range . }}
      {{- $constraints = append $constraints (ternary . (merge (deepCopy $own) .) (hasKey . "labelSelector")) }}
      {{- end }}
      topologySpreadConstraints:
        {{- toYaml $constraints | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ .Chart.Name }}
          image: {{ include "platform-lib.image" . | quote }}
          imagePullPolicy: {{ .Values.image.pullPolicy }}
          {{- if .Values.containerSecurityContext.enabled }}
          securityContext:
            {{- omit .Values.containerSecurityContext "enabled" | toYaml | nindent 12 }}
          {{- end }}
          ports:
            {{- with $component.apiPort }}
            - name: {{ .name }}
              containerPort: {{ $.Values.containerPorts.api }}
              protocol: TCP
            {{- end }}
            - name: management
              containerPort: {{ .Values.containerPorts.management }}
              protocol: TCP
          envFrom:
            - configMapRef:
                name: {{ include "platform-lib.fullname" . }}
          {{- with $env }}
          env:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- with .Values.resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- if or .Values.startupProbe.enabled .Values.customStartupProbe }}
          startupProbe:
            {{- include "platform-lib.probe" (dict "root" . "kind" "startup" "handler" $component.probes.startup) | nindent 12 }}
          {{- end }}
          {{- if or .Values.livenessProbe.enabled .Values.customLivenessProbe }}
          livenessProbe:
            {{- include "platform-lib.probe" (dict "root" . "kind" "liveness" "handler" $component.probes.liveness) | nindent 12 }}
          {{- end }}
          {{- if or .Values.readinessProbe.enabled .Values.customReadinessProbe }}
          readinessProbe:
            {{- include "platform-lib.probe" (dict "root" . "kind" "readiness" "handler" $component.probes.readiness) | nindent 12 }}
          {{- end }}
          {{- if .Values.preStopSleepSeconds }}
          lifecycle:
            preStop:
              exec:
                # Endpoints stop routing here a moment after the pod is marked terminating; keep
                # serving until then, so no request meets a closed port.
                command: ["sleep", {{ .Values.preStopSleepSeconds | toString | quote }}]
          {{- end }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- if $caBundleVolume }}
            - name: ca-bundle
              mountPath: {{ include "platform-lib.caBundlePath" . | dir }}
              readOnly: true
            {{- end }}
            {{- with $volumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
            {{- with .Values.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: {{ .Values.tmpSizeLimit | quote }}
        {{- with $caBundleVolume }}
        - {{ . | nindent 10 | trim }}
        {{- end }}
        {{- with $volumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
        {{- with .Values.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
{{- end -}}
{{- end -}}
