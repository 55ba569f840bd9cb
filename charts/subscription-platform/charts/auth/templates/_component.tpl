{{/* The authentication service's part of the platform-lib contract (see platform-lib/templates/_config.tpl). */}}

{{- define "auth.component" -}}
apiPort:
  name: https
  appProtocol: https
  env: Auth__Port
probes:
  {{- include "platform-lib.managementProbes" . | nindent 2 }}
{{- end -}}

{{- define "auth.configData" -}}
Auth__Host: "0.0.0.0"
Auth__PublicBaseUrl: {{ .Values.publicBaseUrl | quote }}
{{- with .Values.allowedRedirectUris }}
Auth__AllowedRedirectUris: {{ join "," . | quote }}
{{- end }}
Auth__TrustProxy: {{ .Values.trustProxy | quote }}
Auth__ProxyHops: {{ .Values.proxyHops | int64 | quote }}
Auth__Groups__Client: {{ .Values.groups.client | quote }}
Auth__Groups__Subscriber: {{ .Values.groups.subscriber | quote }}
Auth__SupportedLocales: {{ join "," .Values.locales.supported | quote }}
Auth__DefaultLocale: {{ .Values.locales.default | quote }}
ASPNETCORE_ENVIRONMENT: {{ .Values.environment | quote }}
Oidc__ServerUrl: {{ .Values.oidc.serverUrl | quote }}
Oidc__Realm: {{ .Values.oidc.realm | quote }}
Oidc__ClientId: {{ .Values.oidc.clientId | quote }}
Oidc__AdminCredentials__Username: {{ .Values.oidc.adminUsername | quote }}
Oidc__StateTtlSeconds: {{ .Values.oidc.stateTtlSeconds | int64 | quote }}
Oidc__TimeoutMs: {{ .Values.oidc.timeoutMs | int64 | quote }}
Oidc__BackchannelLogoutMaxAgeSeconds: {{ .Values.oidc.backchannelLogoutMaxAgeSeconds | int64 | quote }}
Auth__Workers: {{ .Values.workers | int64 | quote }}
Auth__SessionIdleSeconds: {{ .Values.sessions.idleSeconds | int64 | quote }}
Auth__SessionMaxSeconds: {{ .Values.sessions.maxSeconds | int64 | quote }}
Auth__SessionRenewBeforeSeconds: {{ .Values.sessions.renewBeforeSeconds | int64 | quote }}
Auth__SessionNearCacheEntries: {{ .Values.sessions.nearCacheEntries | int64 | quote }}
Auth__MaxSessionsPerUser: {{ .Values.sessions.maxPerUser | int64 | quote }}
IGNORE_SSL_CERT_VALIDATION: {{ .Values.ignoreSslCertValidation | quote }}
MessageBroker__BrokerList: {{ join "," .Values.kafka.brokers | quote }}
MessageBroker__NotificationsTopic: {{ .Values.kafka.notificationsTopic | quote }}
MessageBroker__UserAuthenticationTopic: {{ .Values.kafka.userAuthenticationTopic | quote }}
MessageBroker__PublishTimeoutMs: {{ .Values.kafka.publishTimeoutMs | int64 | quote }}
Cache__Url: {{ include "platform-lib.cacheAddress" . | quote }}
Cache__DeadlineMs: {{ .Values.cache.deadlineMs | int64 | quote }}
Otp__TtlSeconds: {{ .Values.otp.ttlSeconds | int64 | quote }}
Otp__MaxAttempts: {{ .Values.otp.maxAttempts | int64 | quote }}
Otp__ResendCooldownSeconds: {{ .Values.otp.resendCooldownSeconds | int64 | quote }}
Otp__MaxPerPhone: {{ .Values.otp.maxPerPhone | int64 | quote }}
Otp__MaxPerIp: {{ .Values.otp.maxPerIp | int64 | quote }}
Otp__RateLimitWindowSeconds: {{ .Values.otp.rateLimitWindowSeconds | int64 | quote }}
Otp__PrefixDigits: {{ .Values.otp.prefixDigits | int64 | quote }}
Otp__MaxPerPrefix: {{ .Values.otp.maxPerPrefix | int64 | quote }}
Otp__MaxPerMinute: {{ .Values.otp.maxPerMinute | int64 | quote }}
Otp__AllowedCountries: {{ join "," .Values.otp.allowedCountries | quote }}
{{- with .Values.otp.blockedCountries }}
Otp__BlockedCountries: {{ join "," . | quote }}
{{- end }}
{{- with .Values.otp.monitoredCountries }}
Otp__MonitoredCountries: {{ join "," . | quote }}
{{- end }}
Otp__AllowedNumberTypes: {{ join "," .Values.otp.allowedNumberTypes | quote }}
{{- if .Values.tls.existingSecret }}
Tls__CertPath: /etc/auth/tls/tls.crt
Tls__KeyPath: /etc/auth/tls/tls.key
{{- end }}
Tls__TerminatedUpstream: {{ .Values.tls.terminatedUpstream | quote }}
{{- end -}}

{{- define "auth.secretEnv" -}}
- name: Oidc__ClientSecret
  key: {{ .Values.secretKeys.clientSecret }}
- name: Oidc__AdminCredentials__Password
  key: {{ .Values.secretKeys.adminPassword }}
{{- end -}}

{{- define "auth.extraEnv" -}}
[]
{{- end -}}

{{- define "auth.volumes" -}}
{{- if .Values.tls.existingSecret }}
- name: tls
  secret:
    secretName: {{ .Values.tls.existingSecret }}
    defaultMode: 0440
{{- else -}}
[]
{{- end }}
{{- end -}}

{{- define "auth.volumeMounts" -}}
{{- if .Values.tls.existingSecret }}
- name: tls
  mountPath: /etc/auth/tls
  readOnly: true
{{- else -}}
[]
{{- end }}
{{- end -}}

{{- define "auth.validateValues" -}}
{{- include "platform-lib.validateRequired" (dict "chart" "auth" "values" (dict "publicBaseUrl" .Values.publicBaseUrl "oidc.serverUrl" .Values.oidc.serverUrl "oidc.realm" .Values.oidc.realm "oidc.clientId" .Values.oidc.clientId "oidc.adminUsername" .Values.oidc.adminUsername "kafka.brokers" .Values.kafka.brokers)) }}
{{- include "platform-lib.validateHttpUrls" (dict "chart" "auth" "values" (dict "publicBaseUrl" .Values.publicBaseUrl "oidc.serverUrl" .Values.oidc.serverUrl)) }}
{{- if and (eq .Values.environment "Production") (hasPrefix "http://" .Values.oidc.serverUrl) }}
auth.oidc.serverUrl: must be https in Production (the service refuses plain http to a non-loopback identity provider)
{{- end }}
{{- $workers := int64 .Values.workers }}
{{- if gt $workers 1 }}
{{- $limits := (.Values.resources | default dict).limits | default dict }}
{{- $requests := (.Values.resources | default dict).requests | default dict }}
{{- if and $limits.cpu (lt (include "platform-lib.cpuMillis" $limits.cpu | int64) (mul $workers 1000)) }}
auth.resources.limits.cpu: {{ $limits.cpu }} is less than one CPU for each of the {{ $workers }} workers; raise it to {{ $workers }} or lower workers (beyond the limit the workers only share one quota, each with its own heap)
{{- end }}
{{- if and $limits.memory (lt (include "platform-lib.memoryMiB" $limits.memory | int64) (mul $workers 128)) }}
auth.resources.limits.memory: {{ $limits.memory }} is less than 128Mi for each of the {{ $workers }} workers (each is a Node.js process with its own heap)
{{- end }}
{{- if and $requests.cpu (lt (include "platform-lib.cpuMillis" $requests.cpu | int64) 1000) }}
auth.resources.requests.cpu: {{ $requests.cpu }} is less than one CPU, too little for {{ $workers }} workers (a pod that cannot count on more than one core is served cheaper by one process: workers=1)
{{- end }}
{{- end }}
{{- if not (has .Values.locales.default .Values.locales.supported) }}
auth.locales.default: {{ .Values.locales.default | quote }} is not one of locales.supported
{{- end }}
{{- end -}}

{{/* The chart test's checks (platform-lib/templates/_test.tpl). */}}
{{- define "auth.testChecks" -}}
- name: ready (/readyz of the management port)
  url: http://{{ include "platform-lib.fullname" . }}:{{ .Values.service.ports.metrics }}/readyz
  status: 200
- name: GET /auth without a session cookie is refused
  url: https://{{ include "platform-lib.fullname" . }}:{{ .Values.service.ports.api }}/auth
  insecure: true
  status: 401
{{- end -}}
