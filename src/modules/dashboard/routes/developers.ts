import { listApiKeys, rollApiKey } from '../../merchants/keys.ts';
import {
  createEndpoint,
  deleteEndpoint,
  listEndpoints,
  revealEndpointSecret,
  rotateEndpointSecret,
  sendTestEvent,
  updateEndpoint,
} from '../../webhooks/endpoints.ts';
import { listDeliveries, listEvents, recoverSince } from '../../webhooks/service.ts';
import { can, sendPage } from '../context.ts';
import { graceHoursOutOfRange, sinceInvalid } from '../errors.ts';
import { requireField } from '../forms.ts';
import { html } from '../html.ts';
import { developersPage, type DevelopersModel } from '../pages/developers.ts';
import { noticeOf, type PageRouter, type Signed } from '../routing.ts';

/** Developers: API keys, webhook endpoints, deliveries and events. */
export function developerRoutes({ deps, get, post }: PageRouter): void {
  async function developersModel(signed: Signed, extra: Partial<DevelopersModel> = {}): Promise<DevelopersModel> {
    const { scope, session } = signed;
    const [keys, endpoints, deliveries, events] = await Promise.all([
      listApiKeys(deps.users, scope.merchant_id),
      listEndpoints(deps.webhooks, scope),
      listDeliveries(deps.webhooks, scope, { limit: 25 }),
      listEvents(deps.webhooks, scope, { limit: 25 }),
    ]);
    const shown = keys.filter((key) => (scope.is_sandbox ? key.kind !== 'live' : key.kind === 'live'));
    const requests = new Map(
      await Promise.all(
        shown.map(async (key) => [key.id, await deps.request_log.recent(scope.merchant_id, key.id)] as const),
      ),
    );
    return {
      keys,
      requests,
      endpoints,
      deliveries: deliveries.data,
      events: events.data,
      can_keys: can(session, 'keys'),
      can_webhooks: can(session, 'webhooks'),
      ...extra,
    };
  }

  /** A refused developers form: the page again with the message inline and the endpoint form as typed. */
  const again = async (signed: Signed, error: string) =>
    developersPage(signed.context, await developersModel(signed, { error, values: signed.form }));

  /** An endpoint's signing secret, shown on the page once, after `words`. */
  const secretShown = (signed: Signed, words: 'secret_shown_once' | 'secret_current', secret: string) =>
    html`${signed.context.t(words)}<span class="secret" id="endpoint-secret">${secret}</span>`;

  get('/dashboard/developers', 'Developers: API keys, webhook endpoints, deliveries, events', {}, async (signed) => {
    return sendPage(
      signed.reply,
      developersPage(
        signed.context,
        await developersModel(signed, { notice: noticeOf(signed.context, signed.request.query) }),
      ),
    );
  });

  post(
    '/dashboard/api-keys/:id/roll',
    'Roll an API key: the new key is shown once, the old one works for a grace period',
    { permission: 'keys', on_error: again, confirm: true },
    async (signed) => {
      const hours = Number(signed.form['grace_hours'] ?? '24');
      if (!Number.isInteger(hours) || hours < 0 || hours > 168) throw graceHoursOutOfRange();
      const rolled = await rollApiKey(
        { ...deps.users, key_cache: deps.key_cache },
        signed.scope.merchant_id,
        signed.id,
        hours * 3600,
      );
      const { t } = signed.context;
      const revealed = html`${t('rolled', { kind: rolled.key.kind })}<span class="secret" id="new-key">${rolled.raw_key}</span><br>${t('rolled_grace', { until: rolled.previous.expires_at ?? '' })}`;
      return sendPage(signed.reply, developersPage(signed.context, await developersModel(signed, { revealed })));
    },
  );

  post(
    '/dashboard/webhook-endpoints',
    'Create a webhook endpoint (its secret is shown once)',
    { permission: 'webhooks', on_error: again },
    async (signed) => {
      const { form } = signed;
      const enabled_events = (form['enabled_events'] ?? '*')
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean);
      const endpoint = await createEndpoint(deps.webhooks, signed.scope, {
        url: requireField(form, 'url'),
        ...(form['description']?.trim() ? { description: form['description'].trim().slice(0, 500) } : {}),
        enabled_events: enabled_events.length ? enabled_events : ['*'],
      });
      const revealed = secretShown(signed, 'secret_shown_once', endpoint.secret);
      return sendPage(signed.reply, developersPage(signed.context, await developersModel(signed, { revealed })), 201);
    },
  );

  const secretAction = (
    action: 'rotate' | 'reveal',
    summary: string,
    words: 'secret_shown_once' | 'secret_current',
    read: typeof rotateEndpointSecret,
  ) =>
    post(
      `/dashboard/webhook-endpoints/:id/${action}`,
      summary,
      { permission: 'webhooks', on_error: again },
      async (signed) => {
        const { secret } = await read(deps.webhooks, signed.scope, signed.id);
        const revealed = secretShown(signed, words, secret);
        return sendPage(signed.reply, developersPage(signed.context, await developersModel(signed, { revealed })));
      },
    );
  secretAction(
    'rotate',
    "Rotate a webhook endpoint's secret (the new one is shown once)",
    'secret_shown_once',
    rotateEndpointSecret,
  );
  secretAction('reveal', "Show a webhook endpoint's current signing secret", 'secret_current', revealEndpointSecret);

  const endpointAction = (
    action: string,
    summary: string,
    run: (signed: Signed, id: string) => Promise<string>,
    confirm = false,
  ) =>
    post(
      `/dashboard/webhook-endpoints/:id/${action}`,
      summary,
      { permission: 'webhooks', on_error: again, confirm },
      async (signed) => {
        const notice = await run(signed, signed.id);
        return sendPage(signed.reply, developersPage(signed.context, await developersModel(signed, { notice })));
      },
    );
  endpointAction('test', 'Send a test event to one webhook endpoint', async (signed, id) => {
    const sent = await sendTestEvent(deps.webhooks, signed.scope, id);
    return signed.context.t('test_event_sent', { id: sent.event_id, url: sent.url });
  });
  endpointAction('disable', 'Disable a webhook endpoint (no new deliveries until enabled)', async (signed, id) => {
    await updateEndpoint(deps.webhooks, signed.scope, id, { disabled: true });
    return signed.context.t('done');
  });
  endpointAction('enable', 'Enable a disabled webhook endpoint', async (signed, id) => {
    await updateEndpoint(deps.webhooks, signed.scope, id, { disabled: false });
    return signed.context.t('done');
  });
  endpointAction(
    'delete',
    'Delete a webhook endpoint (its deliveries stay readable)',
    async (signed, id) => {
      await deleteEndpoint(deps.webhooks, signed.scope, id);
      return signed.context.t('done');
    },
    true,
  );

  post(
    '/dashboard/webhook-deliveries/recover',
    'Redeliver every failed delivery since a time',
    { permission: 'webhooks', on_error: again },
    async (signed) => {
      const since_text = requireField(signed.form, 'since');
      const since = new Date(/Z|[+-]\d\d:\d\d$/.test(since_text) ? since_text : `${since_text}Z`);
      if (Number.isNaN(since.getTime())) throw sinceInvalid();
      const result = await recoverSince(deps.webhooks, signed.scope, since.toISOString());
      return sendPage(
        signed.reply,
        developersPage(
          signed.context,
          await developersModel(signed, { notice: signed.context.t('recovered', { n: result.requeued }) }),
        ),
      );
    },
  );
}
