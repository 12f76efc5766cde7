import { defineModule } from '../module.ts';
import { webhooksSection } from './catalog.ts';
import { wakeDispatchersAfterEventCommits } from './outbox.ts';

/**
 * The outbox: every state change writes its event row here in its own transaction. Inserting an event also queues
 * its deliveries: the trigger `events_enqueue_webhook_delivery` writes `webhook_deliveries`, a table the webhooks
 * module owns (webhooks/module.ts names it). After a commit that wrote events, this process sends one coalesced
 * NOTIFY (outside the business transaction) that wakes the dispatchers of every process.
 */
export const eventsModule = defineModule({
  name: 'events',
  owns: ['events'],
  calls: [],
  start: ({ db, commits, logger }) => ({
    webhooks_section: webhooksSection(),
    stopWaking: wakeDispatchersAfterEventCommits(db, commits, (error) =>
      logger.warn({ err: error }, 'webhook wake-up NOTIFY failed; the dispatcher poll covers it'),
    ),
  }),
});
