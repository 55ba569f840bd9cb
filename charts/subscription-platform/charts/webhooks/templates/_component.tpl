{{/* The webhooks service's part of the platform-lib contract (see platform-lib/templates/_config.tpl). */}}

{{- define "webhooks.component" -}}
apiPort:
  name: http
  appProtocol: http
  env: Webhooks__Port
probes:
  {{- include "platform-lib.managementProbes" . | nindent 2 }}
{{- end -}}

{{- define "webhooks.configData" -}}
Webhooks__Host: "0.0.0.0"
Webhooks__PublicBaseUrl: {{ .Values.publicBaseUrl | quote }}
{{- with .Values.paymentProvider.apiUrl }}
PAYMENT_PROVIDER_API_URL: {{ . | quote }}
{{- end }}
PaymentProvider__ReconcileIntervalSeconds: {{ .Values.paymentProvider.reconcileIntervalSeconds | int64 | quote }}
Webhooks__EventLogDays: {{ .Values.eventLog.days | int64 | quote }}
Webhooks__EventLogMaxEvents: {{ .Values.eventLog.maxEvents | int64 | quote }}
Webhooks__DeadAfterFailures: {{ .Values.eventLog.deadAfterFailures | int64 | quote }}
SMS_PROVIDER_ACCOUNT_SID: {{ .Values.smsProvider.accountSid | quote }}
{{- with .Values.smsProvider.messageServiceSid }}
SMS_PROVIDER_MESSAGE_SERVICE_SID: {{ . | quote }}
{{- end }}
SmsProvider__ValidateSignature: {{ .Values.smsProvider.validateSignature | quote }}
GRAPHQL_API_URL: {{ .Values.graphqlApiUrl | quote }}
LOCALIZATION_API_URL: {{ .Values.localizationApiUrl | quote }}
{{- with .Values.authApiUrl }}
AUTH_API_URL: {{ . | quote }}
{{- end }}
{{- if not .Values.store.existingSecretKey }}
STORE_URL: {{ .Values.store.url | quote }}
{{- end }}
Cache__Url: {{ include "platform-lib.cacheAddress" . | quote }}
MessageBroker__BrokerList: {{ join "," .Values.kafka.brokers | quote }}
MessageBroker__PaymentsTopic: {{ .Values.kafka.paymentsTopic | quote }}
MessageBroker__NotificationsTopic: {{ .Values.kafka.notificationsTopic | quote }}
MessageBroker__ForeignProductsTopic: {{ .Values.kafka.foreignProductsTopic | quote }}
AccountUrl: {{ .Values.links.accountUrl | quote }}
BillingPortalUrl: {{ .Values.links.billingPortalUrl | quote }}
ClientLinkBaseUri: {{ .Values.links.clientLinkBaseUri | quote }}
Oidc__ServerUrl: {{ .Values.oidc.serverUrl | quote }}
Oidc__Realm: {{ .Values.oidc.realm | quote }}
Oidc__ClientId: {{ .Values.oidc.clientId | quote }}
Announcements__DraftTtlMs: {{ .Values.announcements.draftTtlMs | int64 | quote }}
{{- end -}}

{{- define "webhooks.secretEnv" -}}
- name: WEBHOOKS_API_KEY
  key: {{ .Values.secretKeys.webhooksApiKey }}
- name: PAYMENT_PROVIDER_API_KEY
  key: {{ .Values.secretKeys.paymentProviderApiKey }}
- name: PAYMENT_PROVIDER_WEBHOOKS_SECRET
  key: {{ .Values.secretKeys.paymentProviderWebhooksSecret }}
- name: SMS_PROVIDER_AUTH_TOKEN
  key: {{ .Values.secretKeys.smsProviderAuthToken }}
- name: Oidc__ClientSecret
  key: {{ .Values.secretKeys.oidcClientSecret }}
{{- with .Values.store.existingSecretKey }}
- name: STORE_URL
  key: {{ . }}
{{- end }}
{{- with .Values.adminApi.existingSecretKey }}
- name: WEBHOOKS_ADMIN_API_KEY
  key: {{ . }}
{{- end }}
{{- end -}}

{{- define "webhooks.extraEnv" -}}
[]
{{- end -}}

{{- define "webhooks.volumes" -}}
[]
{{- end -}}

{{- define "webhooks.volumeMounts" -}}
[]
{{- end -}}

{{- define "webhooks.validateValues" -}}
{{- include "platform-lib.validateRequired" (dict "chart" "webhooks" "values" (dict "publicBaseUrl" .Values.publicBaseUrl "smsProvider.accountSid" .Values.smsProvider.accountSid "graphqlApiUrl" .Values.graphqlApiUrl "localizationApiUrl" .Values.localizationApiUrl "kafka.brokers" .Values.kafka.brokers "links.accountUrl" .Values.links.accountUrl "links.billingPortalUrl" .Values.links.billingPortalUrl "links.clientLinkBaseUri" .Values.links.clientLinkBaseUri "oidc.serverUrl" .Values.oidc.serverUrl "oidc.realm" .Values.oidc.realm "oidc.clientId" .Values.oidc.clientId)) }}
{{- include "platform-lib.validateHttpUrls" (dict "chart" "webhooks" "values" (dict "publicBaseUrl" .Values.publicBaseUrl "paymentProvider.apiUrl" .Values.paymentProvider.apiUrl "graphqlApiUrl" .Values.graphqlApiUrl "localizationApiUrl" .Values.localizationApiUrl "authApiUrl" .Values.authApiUrl "links.accountUrl" .Values.links.accountUrl "links.billingPortalUrl" .Values.links.billingPortalUrl "links.clientLinkBaseUri" .Values.links.clientLinkBaseUri "oidc.serverUrl" .Values.oidc.serverUrl)) }}
{{- include "platform-lib.validateStore" (dict "chart" "webhooks" "store" .Values.store "replicas" (include "platform-lib.multipleReplicas" .)) }}
{{- end -}}

{{/* The chart test's checks (platform-lib/templates/_test.tpl). */}}
{{- define "webhooks.testChecks" -}}
- name: ready (/readyz of the management port)
  url: http://{{ include "platform-lib.fullname" . }}:{{ .Values.service.ports.metrics }}/readyz
  status: 200
- name: an unsigned Stripe event is refused by the signature check
  url: http://{{ include "platform-lib.fullname" . }}:{{ .Values.service.ports.api }}/api/PaymentProviderWebhookHandler?code=${WEBHOOKS_API_KEY}
  method: POST
  headers:
    content-type: application/json
  body: '{"id":"evt_helm_test","object":"event","type":"checkout.session.completed","created":0,"livemode":false,"data":{"object":{}}}'
  env: [WEBHOOKS_API_KEY]
  status: 400
  bodyIncludes: invalid signature
{{- end -}}
