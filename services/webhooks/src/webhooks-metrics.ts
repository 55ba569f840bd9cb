import { Counter, type Registry } from 'prom-client';

const PROVIDERS = ['stripe', 'twilio'] as const;
export type WebhookProvider = (typeof PROVIDERS)[number];

/** What became of one webhook delivery. */
export type WebhookResult = 'processed' | 'ignored' | 'duplicate' | 'deferred' | 'stale' | 'refused' | 'retry' | 'failed';

export interface WebhooksMetrics {
  event(provider: WebhookProvider, type: string, result: WebhookResult): void;
  signatureFailure(provider: WebhookProvider): void;
  /** A payment provider event of the other mode (live/test) than the configured key: a misconfiguration. */
  livemodeMismatch(eventLivemode: boolean): void;
  smsCommand(command: string): void;
  announcementSent(recipients: number): void;
}

/** The service's own counters, on the service's registry (labels of bounded cardinality only). */
export function createWebhooksMetrics(registry: Registry): WebhooksMetrics {
  const events = new Counter({
    name: 'webhook_events_total',
    help: 'Webhook deliveries by provider, event type (payment provider) or "sms", and result',
    labelNames: ['provider', 'type', 'result'],
    registers: [registry],
  });
  const signatureFailures = new Counter({
    name: 'webhook_signature_failures_total',
    help: 'Webhook deliveries refused because their signature did not verify',
    labelNames: ['provider'],
    registers: [registry],
  });
  // At 0 from the start for both providers: the alert on increase() sees the first refusals.
  for (const provider of PROVIDERS) signatureFailures.inc({ provider }, 0);
  const livemodeMismatches = new Counter({
    name: 'webhook_livemode_mismatches_total',
    help: 'Payment provider events refused because their livemode differs from the mode of the configured API key (a misconfiguration)',
    labelNames: ['event_mode'],
    registers: [registry],
  });
  // At 0 for both modes, so an alert on increase() sees the first mismatch.
  for (const mode of ['live', 'test']) livemodeMismatches.inc({ event_mode: mode }, 0);
  const commands = new Counter({ name: 'sms_commands_total', help: 'Incoming SMS by command', labelNames: ['command'], registers: [registry] });
  const announcements = new Counter({ name: 'announcements_sent_total', help: 'Announcements confirmed and sent', registers: [registry] });
  const recipients = new Counter({
    name: 'announcement_recipients_total',
    help: 'SMS notification events published for announcements (one per subscriber)',
    registers: [registry],
  });
  return {
    event: (provider, type, result) => events.inc({ provider, type, result }),
    signatureFailure: (provider) => signatureFailures.inc({ provider }),
    livemodeMismatch: (eventLivemode) => livemodeMismatches.inc({ event_mode: eventLivemode ? 'live' : 'test' }),
    smsCommand: (command) => commands.inc({ command }),
    announcementSent(count) {
      announcements.inc();
      recipients.inc(count);
    },
  };
}
