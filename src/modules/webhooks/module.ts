import { EVENTS_CHANNEL } from '../events/outbox.ts';
import { defineModule } from '../module.ts';
import { WEBHOOK_FALLBACK_POLL_MS, WebhookDispatcher, type DispatcherDeps } from './dispatcher.ts';
import { webhookSetupPort } from './default-endpoint.ts';
import type { WebhooksDeps } from './endpoints.ts';
import { webhookRoutes } from './routes.ts';
import { sellerWebhookRoutes } from './seller-routes.ts';
import { eventStreamRoutes } from './stream.ts';
import { resolveWebhookSecretsKey, SecretBox, sealPlaintextSecrets } from './secret-box.ts';
import { EndpointSchema } from './schema.ts';

/**
 * The database trigger that writes this module's `webhook_deliveries` rows: `after insert on events`, one row per
 * subscribed endpoint of the event's merchant and mode, in the event's own transaction, once per INSERT statement. No TypeScript inserts deliveries; the dispatcher claims, sends and
 * records them.
 */
export const DELIVERY_TRIGGER = 'events_enqueue_webhook_delivery';

/** Webhook endpoints and their sealed secrets, deliveries (written by `DELIVERY_TRIGGER`), attempts and the dispatcher. */
export const webhooksModule = defineModule({
  name: 'webhooks',
  owns: ['webhook_endpoints', 'webhook_deliveries', 'webhook_attempts'],
  calls: ['events', 'merchants'],
  start: async ({ config, db, clock, logger, wake, listen, commits }) => {
    const box = new SecretBox(await resolveWebhookSecretsKey(db, config, logger));
    // Before anything serves: no webhook secret stays in plaintext (migration 0100 copies them as they were).
    await sealPlaintextSecrets(db, box);
    const deps: WebhooksDeps = {
      db,
      clock,
      box,
      allow_private_targets: config.webhook_allow_private_targets,
      self_origin: config.public_base_url,
    };
    const dispatch: DispatcherDeps = {
      db,
      clock,
      box,
      timeout_ms: config.webhook_timeout_ms,
      allow_private_targets: config.webhook_allow_private_targets,
      self_origin: config.public_base_url,
      max_in_flight_per_endpoint: config.webhook_max_in_flight_per_endpoint,
      logger,
    };
    const dispatcher = new WebhookDispatcher({
      ...dispatch,
      max_in_flight: config.webhook_max_in_flight,
      onSettled: () => wake('webhook-dispatch'),
    });
    // New events wake the dispatcher at once: every process sends a NOTIFY after commits that wrote events (outside
    // the business transaction, coalesced; events/module.ts), and a worker listens, also across processes on PostgreSQL.
    const stopListening = config.roles.has('worker')
      ? await listen(EVENTS_CHANNEL, () => wake('webhook-dispatch'))
      : undefined;
    return {
      deps,
      dispatch,
      dispatcher,
      setup: webhookSetupPort(deps),
      stopListening,
      routes: async (server) => {
        await server.register(webhookRoutes, { deps });
        await server.register(sellerWebhookRoutes, { deps });
        await server.register(eventStreamRoutes, { deps: { db, clock, commits } });
      },
      schemas: { document: { WebhookEndpoint: EndpointSchema } },
      // The short poll is the fallback for a wake-up that never came (a process that died between commit and NOTIFY)
      // and for retries that come due.
      jobs: [
        {
          name: 'webhook-dispatch',
          interval_ms: Math.min(config.worker_poll_interval_ms, WEBHOOK_FALLBACK_POLL_MS),
          run: () => dispatcher.pass(),
        },
      ],
    };
  },
});
