import type Koa from 'koa';
import { Router } from '@koa/router';
import type { CacheClient } from '@sp/cache-client';
import { byMethod, connectRedis, createHttpApp, notFound, parseRedisUrl, type EventPublisher, type Logger, type ReadinessCheck, type Registry } from '@sp/platform';
import { createCacheAnnouncementDrafts } from './announcement-drafts.js';
import { requireCode } from './api-code.js';
import type { StoreConfig } from './config.js';
import type { DedupStore } from './dedup-store.js';
import type { Topics } from './events.js';
import type { Gateway } from './gateway.js';
import type { Localization } from './localization.js';
import { createMemoryDedupStore } from './memory-dedup-store.js';
import type { PaymentProvider } from './payment-provider.js';
import { paymentProviderWebhook } from './payment-webhook.js';
import type { ProcessOnceOptions } from './process-once.js';
import { createRedisDedupStore } from './redis-dedup-store.js';
import type { SmsProvider } from './sms-provider.js';
import type { ReplyLinks } from './sms-replies.js';
import { SMS_WEBHOOK_PATH, smsProviderWebhook } from './sms-webhook.js';
import { createWebhooksMetrics } from './webhooks-metrics.js';

export const PAYMENT_WEBHOOK_PATH = '/api/PaymentProviderWebhookHandler';
export { SMS_WEBHOOK_PATH };

export interface WebhooksAppDeps {
  /** WEBHOOKS_API_KEY values accepted in `code`. */
  apiKeys: readonly string[];
  paymentProvider: PaymentProvider;
  /** Whether PAYMENT_PROVIDER_API_KEY is a live-mode key: events of the other mode are refused. */
  livemode: boolean;
  smsProvider: SmsProvider;
  gateway: Gateway;
  dedup: DedupStore;
  cache: CacheClient<string>;
  localization: Localization;
  publisher: EventPublisher;
  topics: Topics;
  links: ReplyLinks;
  sms: { accountSid: string; validateSignature: boolean; publicBaseUrl: string; draftTtlMs: number; messageRetentionMs: number };
  logger: Logger;
  registry: Registry;
  processOnceOptions?: ProcessOnceOptions;
}

/** The de-duplication store chosen by configuration (payment events, SMS message ids); the memory store warns, since it is for local runs only. */
export function createDedupStore(config: StoreConfig, logger: Logger, keyPrefix?: string): DedupStore {
  if (config.kind === 'redis') return createRedisDedupStore(connectRedis(parseRedisUrl(config.url)), logger, keyPrefix);
  logger.warn('STORE_URL is memory://: processed payment events and SMS are remembered in this process only; use redis:// outside local runs');
  return createMemoryDedupStore();
}

/**
 * What /readyz checks: every dependency a webhook cannot be handled without. The localization
 * service is not among them: without it announcements go out in the original text.
 */
export function webhooksReadiness(deps: Pick<WebhooksAppDeps, 'dedup' | 'cache' | 'publisher' | 'gateway'>): ReadinessCheck[] {
  return [
    { name: 'store', check: () => deps.dedup.check() },
    { name: 'cache', check: async () => void (await deps.cache.get('webhooks:readiness')) },
    { name: 'broker', check: () => deps.publisher.check() },
    { name: 'gateway', check: () => deps.gateway.check() },
  ];
}

/**
 * The webhooks HTTP app: the two provider routes, each behind the `code` check (401 before
 * anything else happens), other methods 405 with `Allow: POST`, other paths 404.
 */
export function createWebhooksApp(deps: WebhooksAppDeps): Koa {
  const metrics = createWebhooksMetrics(deps.registry);
  const app = createHttpApp({ logger: deps.logger, registry: deps.registry });
  const authenticate = requireCode(deps.apiKeys);
  const router = new Router();
  router.all(PAYMENT_WEBHOOK_PATH, authenticate, byMethod({ POST: paymentProviderWebhook({ ...deps, metrics }) }));
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
  app.use(router.routes());
  app.use(() => {
    throw notFound();
  });
  return app;
}
