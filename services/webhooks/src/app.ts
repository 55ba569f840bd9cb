import type Koa from 'koa';
import { Router } from '@koa/router';
import type { CacheClient } from '@sp/cache-client';
import { notFound } from '@sp/core';
import type { Logger, Registry } from '@sp/observability';
import { byMethod, createHttpApp, type ReadinessCheck } from '@sp/http';
import { requireApiKey } from '@sp/identity';
import type { EventPublisher } from '@sp/messaging';
import { ADMIN_EVENTS_PATH, getEvent, listEvents, replayEvent } from './admin-events.js';
import { createCacheAnnouncementDrafts } from './sms/announcement-drafts.js';
import { requireCode } from './api-code.js';
import type { ProcessingStore } from './events/processing-store.js';
import type { EventLog } from './events/event-log.js';
import type { Topics } from './topics.js';
import type { GatewayPort } from './gateway/gateway-port.js';
import type { Localization } from './sms/localization.js';
import type { PaymentProvider } from './payments/payment-provider.js';
import { paymentProviderWebhook } from './payments/payment-webhook.js';
import type { ProcessOnceOptions } from './events/process-once.js';
import type { SmsProvider } from './sms/sms-provider.js';
import type { ReplyLinks } from './sms/sms-replies.js';
import { SMS_WEBHOOK_PATH, smsProviderWebhook } from './sms/sms-webhook.js';
import type { WebhooksMetrics } from './webhooks-metrics.js';

export const PAYMENT_WEBHOOK_PATH = '/api/PaymentProviderWebhookHandler';
export { SMS_WEBHOOK_PATH };

export interface WebhooksAppDeps {
  /** WEBHOOKS_API_KEY values accepted in `code`. */
  apiKeys: readonly string[];
  paymentProvider: PaymentProvider;
  /** Whether PAYMENT_PROVIDER_API_KEY is a live-mode key: events of the other mode are refused. */
  livemode: boolean;
  smsProvider: SmsProvider;
  gateway: GatewayPort;
  processing: ProcessingStore;
  eventLog: EventLog;
  /** WEBHOOKS_ADMIN_API_KEY values accepted in `X-Api-Key` on the admin API; undefined: no admin API (404). */
  adminApiKeys: readonly string[] | undefined;
  metrics: WebhooksMetrics;
  cache: CacheClient<string>;
  localization: Localization;
  publisher: EventPublisher;
  topics: Topics;
  links: ReplyLinks;
  sms: { accountSid: string; validateSignature: boolean; publicBaseUrl: string; draftTtlMs: number; messageRetentionMs: number };
  logger: Logger;
  registry: Registry;
  processOnceOptions?: ProcessOnceOptions;
  /** The clock, Unix ms. */
  now: () => number;
}

/**
 * What /readyz checks: every dependency a webhook cannot be handled without. The localization
 * service is not among them: without it announcements go out in the original text.
 */
export function webhooksReadiness(deps: Pick<WebhooksAppDeps, 'processing' | 'cache' | 'publisher' | 'gateway'>): ReadinessCheck[] {
  return [
    { name: 'store', check: () => deps.processing.check() },
    { name: 'cache', check: async () => void (await deps.cache.get('webhooks:readiness')) },
    { name: 'broker', check: () => deps.publisher.check() },
    { name: 'gateway', check: () => deps.gateway.check() },
  ];
}

/** The admin API (/api/events…) behind its own key in `X-Api-Key` (401 before anything else happens). */
function adminRoutes(router: Router, deps: WebhooksAppDeps, adminApiKeys: readonly string[]): void {
  const authenticate = requireApiKey(adminApiKeys);
  router.all(ADMIN_EVENTS_PATH, authenticate, byMethod({ GET: listEvents(deps.eventLog) }));
  router.all(`${ADMIN_EVENTS_PATH}/:id`, authenticate, byMethod({ GET: getEvent(deps.eventLog) }));
  router.all(`${ADMIN_EVENTS_PATH}/:id/replay`, authenticate, byMethod({ POST: replayEvent(deps) }));
}

/**
 * The webhooks HTTP app: the two provider routes, each behind the `code` check (401 before
 * anything else happens), other methods 405 with `Allow: POST`; the admin API when a key is
 * configured; other paths 404.
 */
export function createWebhooksApp(deps: WebhooksAppDeps): Koa {
  const { metrics } = deps;
  const app = createHttpApp({ logger: deps.logger, registry: deps.registry });
  const authenticate = requireCode(deps.apiKeys);
  const router = new Router();
  router.all(PAYMENT_WEBHOOK_PATH, authenticate, byMethod({ POST: paymentProviderWebhook(deps) }));
  router.all(
    SMS_WEBHOOK_PATH,
    authenticate,
    byMethod({
      POST: smsProviderWebhook({
        ...deps,
        ...deps.sms,
        drafts: createCacheAnnouncementDrafts(deps.cache),
        metrics,
      }),
    }),
  );
  if (deps.adminApiKeys !== undefined) adminRoutes(router, deps, deps.adminApiKeys);
  app.use(router.routes());
  app.use(() => {
    throw notFound();
  });
  return app;
}
