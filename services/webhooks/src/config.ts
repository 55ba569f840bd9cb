import { z } from 'zod';
import { env, operationsEnv, parseEnv, type Env, type StoreConfig } from '@sp/core';

export interface WebhooksConfig {
  port: number;
  host: string;
  managementPort: number;
  /** Accepted values of the `code` query parameter; more than one while a key is rotated. */
  apiKeys: readonly string[];
  /** Accepted values of `X-Api-Key` on the admin API (/api/events); undefined: the admin API is off (404). */
  adminApiKeys: readonly string[] | undefined;
  /** Between reconciliation sweeps; 0: no sweeps. */
  reconcileIntervalMs: number;
  eventLog: {
    /** How long an event's record is kept after it was first seen. */
    retentionMs: number;
    /** The most records kept (the oldest go first). */
    maxEvents: number;
    /** Failed attempts after which an event is a dead letter. */
    deadAfterFailures: number;
  };
  paymentProvider: {
    apiKey: string;
    /** Whether the API key is a live-mode key (`sk_live_`/`rk_live_`) or a test-mode one: events of the other mode are refused. */
    livemode: boolean;
    /** Stripe API base URL; undefined means Stripe's own (tests point it at stripe-mock). */
    apiUrl: string | undefined;
    /** Webhook signing secrets (`whsec_…`); any of them verifies a signature. */
    webhookSecrets: readonly string[];
  };
  smsProvider: {
    accountSid: string;
    authTokens: readonly string[];
    /** Accepted for compatibility with the specification; replies go back as TwiML, so it is not used. */
    messageServiceSid: string | undefined;
    validateSignature: boolean;
    /** How long a processed MessageSid is remembered: a replayed message within it does nothing. */
    messageRetentionMs: number;
  };
  /** The public base URL the SMS provider calls (signatures are computed over it). */
  publicBaseUrl: string;
  graphqlUrl: string;
  localizationUrl: string;
  /** Accepted for compatibility with the specification; the service does not call it. */
  authApiUrl: string | undefined;
  /** Where processed payment provider events are remembered: Redis (the real store) or memory (local runs only). */
  store: StoreConfig;
  cacheAddress: string;
  brokers: readonly string[];
  topics: { payments: string; notifications: string; foreignProducts: string };
  links: { account: string; billingPortal: string; clientBase: string };
  oidc: { serverUrl: string; realm: string; clientId: string; clientSecret: string };
  announcementTtlMs: number;
  logLevel: string;
  shutdownGraceMs: number;
}

const httpUrl = (): z.ZodType<string> => env.url(['http', 'https']);

/**
 * Every variable of the service, declared once: name, schema, default and description (`make docs`
 * writes the README's settings table from it).
 */
export const settings = {
  Webhooks__Port: env.port(5000).describe('HTTP port'),
  Webhooks__Host: env.string().default('0.0.0.0').describe('Listening address'),
  Webhooks__PublicBaseUrl: httpUrl().describe('The public base URL Twilio calls (e.g. `https://hooks.example.com`); signatures are checked against `{this}{path as called}?{query as called}`, so they match behind an ingress that strips a path prefix'),
  WEBHOOKS_API_KEY: env.list().describe('Value(s) accepted in the `code` query parameter; comma-separated for rotation'),
  WEBHOOKS_ADMIN_API_KEY: env.list().optional().describe('Value(s) accepted in `X-Api-Key` on the admin API (`/api/events…`); comma-separated for rotation. Unset: no admin API (404)'),
  PaymentProvider__ReconcileIntervalSeconds: z.coerce
    .number()
    .int()
    .min(0, { message: 'must be 0 (off) or a number of seconds' })
    .default(300)
    .describe('Seconds between reconciliation sweeps over Stripe\'s events API; `0` switches them off. The API key must be allowed to read events'),
  Webhooks__EventLogDays: env.positiveInt(7).describe('Days an event stays in the event log after it was first seen'),
  Webhooks__EventLogMaxEvents: env.positiveInt(100_000).describe('Most events the log keeps; the oldest first seen go first (about 600 bytes of Redis each: ~60 MB at the bound)'),
  Webhooks__DeadAfterFailures: env.positiveInt(10).describe('Failed attempts after which an event is a dead letter'),
  // The key's mode decides which events are accepted (see the README, livemode): it must be stated.
  PAYMENT_PROVIDER_API_KEY: env
    .string()
    .regex(/^(sk|rk)_(test|live)_\S+$/, { message: 'must be a Stripe secret or restricted key (sk_test_…, sk_live_…, rk_test_…, rk_live_…)' })
    .describe('Stripe secret or restricted key (reads checkout sessions, invoices, products, prices, events); its mode (`sk_test_`, `rk_test_`, `sk_live_`, `rk_live_`) decides which events are accepted'),
  PAYMENT_PROVIDER_API_URL: httpUrl().optional().describe('Stripe API base URL (unset: Stripe\'s own); tests point it at stripe-mock'),
  PAYMENT_PROVIDER_WEBHOOKS_SECRET: env.list().describe('Webhook signing secret(s) (`whsec_…`); comma-separated for rotation'),
  SMS_PROVIDER_ACCOUNT_SID: env
    .string()
    .regex(/^AC[0-9a-fA-F]{32}$/, { message: 'must be a Twilio account SID (AC followed by 32 hex digits)' })
    .describe('Twilio account SID (`AC` + 32 hex); messages for another account are refused (403)'),
  SMS_PROVIDER_AUTH_TOKEN: env.list().describe('Twilio auth token(s) for signature validation; comma-separated for rotation'),
  SMS_PROVIDER_MESSAGE_SERVICE_SID: env
    .string()
    .regex(/^MG[0-9a-fA-F]{32}$/, { message: 'must be a Twilio messaging service SID (MG followed by 32 hex digits)' })
    .optional()
    .describe('Validated (`MG` + 32 hex) when set; not used: replies go back as TwiML, announcements are sent by the notification service'),
  SmsProvider__ValidateSignature: env.bool(true).describe('`false` switches Twilio signature validation off (local runs only; a warning is logged)'),
  SmsProvider__MessageRetentionMs: env.positiveInt(30 * 24 * 60 * 60 * 1000).describe('How long a processed Twilio `MessageSid` is remembered (30 days): a replayed message within it does nothing'),
  GRAPHQL_API_URL: httpUrl().describe('The GraphQL gateway endpoint'),
  LOCALIZATION_API_URL: httpUrl().describe('Base URL of the localization service'),
  AUTH_API_URL: httpUrl().optional().describe('Accepted (validated as a URL) for compatibility with the specification; not called: the service authenticates to the gateway with its own client credentials'),
  STORE_URL: env.storeUrl().describe('Where processed payment events, the event log and SMS message ids are kept, shared by the replicas: `redis://…`, `rediss://…`, `redis+sentinel://host:port,…/master`, `redis+cluster://host:port,…`; `memory://` for local runs only (a warning is logged)'),
  Cache__Url: env.cacheAddress().describe('`host:port` or `[ipv6]:port` of the cache service (announcement drafts; a `grpc://` or `dns:` prefix is accepted)'),
  MessageBroker__BrokerList: env.list().describe('Kafka brokers, comma-separated'),
  MessageBroker__PaymentsTopic: env.string().default('Payments').describe('Topic of payment confirmation events'),
  MessageBroker__NotificationsTopic: env.string().default('notifications').describe('Topic of SMS notification events'),
  MessageBroker__ForeignProductsTopic: env.string().default('ForeignProducts').describe('Topic of provider product events'),
  AccountUrl: httpUrl().describe('Account page link in SMS replies'),
  BillingPortalUrl: httpUrl().describe('Billing portal link in SMS replies'),
  ClientLinkBaseUri: httpUrl().describe('Base of a client\'s page link in SMS replies: `{ClientLinkBaseUri}/{client number}`'),
  Oidc__ServerUrl: httpUrl().describe('Keycloak base URL: the gateway token comes from a client-credentials grant at `{ServerUrl}/realms/{Realm}/protocol/openid-connect/token`'),
  Oidc__Realm: env.string().describe('Keycloak realm'),
  Oidc__ClientId: env.string().describe('Client of the client-credentials grant'),
  Oidc__ClientSecret: env.string().describe('Its secret'),
  Announcements__DraftTtlMs: env.positiveInt(24 * 60 * 60 * 1000).describe('Life of an announcement draft (24 h)'),
  ...operationsEnv,
};

const withoutTrailingSlash = (url: string): string => url.replace(/\/+$/, '');

/**
 * The only reader of the environment (the process' own unless one is given); every variable is
 * validated at start and every problem reported at once, by variable name.
 */
export function loadConfig(environment: Env = process.env): WebhooksConfig {
  const vars = parseEnv(settings, environment);
  return {
    port: vars.Webhooks__Port,
    host: vars.Webhooks__Host,
    managementPort: vars.Management__Port,
    apiKeys: vars.WEBHOOKS_API_KEY,
    adminApiKeys: vars.WEBHOOKS_ADMIN_API_KEY,
    reconcileIntervalMs: vars.PaymentProvider__ReconcileIntervalSeconds * 1000,
    eventLog: {
      retentionMs: vars.Webhooks__EventLogDays * 24 * 60 * 60 * 1000,
      maxEvents: vars.Webhooks__EventLogMaxEvents,
      deadAfterFailures: vars.Webhooks__DeadAfterFailures,
    },
    paymentProvider: {
      apiKey: vars.PAYMENT_PROVIDER_API_KEY,
      livemode: /^(sk|rk)_live_/.test(vars.PAYMENT_PROVIDER_API_KEY),
      apiUrl: vars.PAYMENT_PROVIDER_API_URL,
      webhookSecrets: vars.PAYMENT_PROVIDER_WEBHOOKS_SECRET,
    },
    smsProvider: {
      accountSid: vars.SMS_PROVIDER_ACCOUNT_SID,
      authTokens: vars.SMS_PROVIDER_AUTH_TOKEN,
      messageServiceSid: vars.SMS_PROVIDER_MESSAGE_SERVICE_SID,
      validateSignature: vars.SmsProvider__ValidateSignature,
      messageRetentionMs: vars.SmsProvider__MessageRetentionMs,
    },
    publicBaseUrl: withoutTrailingSlash(vars.Webhooks__PublicBaseUrl),
    graphqlUrl: vars.GRAPHQL_API_URL,
    localizationUrl: withoutTrailingSlash(vars.LOCALIZATION_API_URL),
    authApiUrl: vars.AUTH_API_URL,
    store: vars.STORE_URL,
    cacheAddress: vars.Cache__Url,
    brokers: vars.MessageBroker__BrokerList,
    topics: {
      payments: vars.MessageBroker__PaymentsTopic,
      notifications: vars.MessageBroker__NotificationsTopic,
      foreignProducts: vars.MessageBroker__ForeignProductsTopic,
    },
    links: { account: vars.AccountUrl, billingPortal: vars.BillingPortalUrl, clientBase: withoutTrailingSlash(vars.ClientLinkBaseUri) },
    oidc: {
      serverUrl: withoutTrailingSlash(vars.Oidc__ServerUrl),
      realm: vars.Oidc__Realm,
      clientId: vars.Oidc__ClientId,
      clientSecret: vars.Oidc__ClientSecret,
    },
    announcementTtlMs: vars.Announcements__DraftTtlMs,
    logLevel: vars.Log__Level,
    shutdownGraceMs: vars.Shutdown__GracePeriodMs,
  };
}
