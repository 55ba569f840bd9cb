import { Counter, Gauge, type Registry } from 'prom-client';
import { counterFromZero } from '@sp/observability';

const PROVIDERS = ['stripe', 'twilio'] as const;
export type WebhookProvider = (typeof PROVIDERS)[number];

/** What became of one webhook delivery. */
export type WebhookResult = 'processed' | 'ignored' | 'duplicate' | 'deferred' | 'stale' | 'refused' | 'retry' | 'failed';

/** What became of an event the sweep listed or an operator replayed. */
export type ReconciledResult = 'processed' | 'deferred' | 'duplicate' | 'stale' | 'ignored' | 'failed';
const RECONCILED_RESULTS: readonly ReconciledResult[] = ['processed', 'deferred', 'duplicate', 'stale', 'ignored', 'failed'];

/** How a reconciliation sweep ended: `skipped` when another replica holds the lease. */
export type SweepResult = 'completed' | 'failed' | 'skipped';

export interface WebhooksMetrics {
  event(provider: WebhookProvider, type: string, result: WebhookResult): void;
  signatureFailure(provider: WebhookProvider): void;
  /** A payment provider event of the other mode (live/test) than the configured key: a misconfiguration. */
  livemodeMismatch(eventLivemode: boolean): void;
  smsCommand(command: string): void;
  announcementSent(recipients: number): void;
  /** An event run through the pipeline by the sweep or a replay. */
  reconciled(source: 'reconcile' | 'replay', result: ReconciledResult): void;
  sweep(result: SweepResult): void;
}

/**
 * `webhook_dead_letters`: dead letters in the event log, read from the store at each scrape (the
 * same value on every replica: alert on max()). A store that cannot be read keeps the last value.
 */
export function registerDeadLetterGauge(registry: Registry, count: () => Promise<number>): void {
  new Gauge({
    name: 'webhook_dead_letters',
    help: 'Payment provider events that failed Webhooks__DeadAfterFailures times or past the provider\'s retry window, kept in the event log until replayed successfully',
    registers: [registry],
    async collect() {
      try {
        this.set(await count());
      } catch {
        // The store is down: readiness reports it; the gauge keeps its last value.
      }
    },
  }).set(0);
}

/** The service's own counters, on the service's registry (labels of bounded cardinality only). */
export function createWebhooksMetrics(registry: Registry): WebhooksMetrics {
  const events = new Counter({
    name: 'webhook_events_total',
    help: 'Webhook deliveries by provider, event type (payment provider) or "sms", and result',
    labelNames: ['provider', 'type', 'result'],
    registers: [registry],
  });
  // At 0 from the start for both providers: the alert on increase() sees the first refusals.
  const signatureFailures = counterFromZero(registry, {
    name: 'webhook_signature_failures_total',
    help: 'Webhook deliveries refused because their signature did not verify',
    labels: { provider: PROVIDERS },
  });
  // At 0 for both modes, so an alert on increase() sees the first mismatch.
  const livemodeMismatches = counterFromZero(registry, {
    name: 'webhook_livemode_mismatches_total',
    help: 'Payment provider events refused because their livemode differs from the mode of the configured API key (a misconfiguration)',
    labels: { event_mode: ['live', 'test'] },
  });
  const commands = new Counter({ name: 'sms_commands_total', help: 'Incoming SMS by command', labelNames: ['command'], registers: [registry] });
  const announcements = new Counter({ name: 'announcements_sent_total', help: 'Announcements confirmed and sent', registers: [registry] });
  const recipients = new Counter({
    name: 'announcement_recipients_total',
    help: 'SMS notification events published for announcements (one per subscriber)',
    registers: [registry],
  });
  const reconciled = counterFromZero(registry, {
    name: 'webhook_reconciled_events_total',
    help: 'Payment provider events run through the pipeline by the reconciliation sweep or an operator\'s replay, by result',
    labels: { source: ['reconcile', 'replay'], result: RECONCILED_RESULTS },
  });
  const sweeps = counterFromZero(registry, { name: 'webhook_reconcile_sweeps_total', help: 'Reconciliation sweeps by how they ended', labels: { result: ['completed', 'failed', 'skipped'] } });
  return {
    event: (provider, type, result) => events.inc({ provider, type, result }),
    reconciled: (source, result) => reconciled.inc({ source, result }),
    sweep: (result) => sweeps.inc({ result }),
    signatureFailure: (provider) => signatureFailures.inc({ provider }),
    livemodeMismatch: (eventLivemode) => livemodeMismatches.inc({ event_mode: eventLivemode ? 'live' : 'test' }),
    smsCommand: (command) => commands.inc({ command }),
    announcementSent(count) {
      announcements.inc();
      recipients.inc(count);
    },
  };
}
