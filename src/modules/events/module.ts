import { defineModule } from '../module.ts';
import { webhooksSection } from './catalog.ts';

/**
 * The outbox: every state change writes its event row here in its own transaction. Inserting an event also queues
 * its deliveries: the trigger `events_enqueue_webhook_delivery` writes `webhook_deliveries`, a table the webhooks
 * module owns (webhooks/module.ts names it).
 */
export const eventsModule = defineModule({
  name: 'events',
  owns: ['events'],
  calls: [],
  start: () => ({ webhooks_section: webhooksSection() }),
});
