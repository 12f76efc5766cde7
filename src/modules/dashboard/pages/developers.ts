import type { ApiKeyView } from '../../merchants/keys.ts';
import type { EndpointView } from '../../webhooks/endpoints.ts';
import type { DeliveryView, EventView } from '../../webhooks/service.ts';
import { when } from '../format.ts';
import { html, type Html } from '../html.ts';
import { csrfField, eventLabel, flash, page, statusBadge, type PageContext } from '../layout.ts';
import { REQUEST_LOG_DAYS, type RequestLogEntry } from '../request-log.ts';
import { deliveriesTable } from './deliveries.ts';

export interface DevelopersModel {
  keys: ApiKeyView[];
  /** Each shown key's recent API calls. */
  requests: Map<string, RequestLogEntry[]>;
  endpoints: EndpointView[];
  deliveries: DeliveryView[];
  events: EventView[];
  can_keys: boolean;
  can_webhooks: boolean;
  /** A secret shown once, right after it was made (never stored for display). */
  revealed?: Html | undefined;
  notice?: string | undefined;
  error?: string | undefined;
  /** What was typed into the endpoint form, kept when it is refused. */
  values?: Record<string, string> | undefined;
}

function requestLog(context: PageContext, entries: RequestLogEntry[]): Html {
  const { t } = context;
  if (!entries.length) return html`<p class="muted">${t('none')}</p>`;
  return html`<table class="requests cards"><thead><tr><th>${t('created')}</th><th>${t('method')}</th><th>${t('path')}</th><th class="num">${t('status')}</th><th class="num">${t('duration')}</th><th>${t('request_id')}</th></tr></thead><tbody>
${entries.map((entry) => html`<tr><td data-label="${t('created')}">${when(context, entry.created_at)}</td><td data-label="${t('method')}">${entry.method}</td><td class="mono" data-label="${t('path')}">${entry.path}</td><td class="num" data-label="${t('status')}">${entry.status}</td><td class="num" data-label="${t('duration')}">${entry.duration_ms} ms</td><td class="mono" data-label="${t('request_id')}">${entry.request_id}</td></tr>`)}</tbody></table>`;
}

export function developersPage(context: PageContext, model: DevelopersModel): string {
  const { t, session } = context;
  const values = model.values ?? {};
  const mode = session?.mode ?? 'live';
  const shown = model.keys.filter((key) => (mode === 'live' ? key.kind === 'live' : key.kind !== 'live'));
  const keys = shown.map(
    (
      key,
    ) => html`<tr><td data-label="${t('kind')}">${statusBadge(context, key.kind)}</td><td class="mono" data-label="${t('hint')}">${key.hint}</td><td data-label="${t('status')}">${statusBadge(context, key.status)}</td><td data-label="${t('created')}">${when(context, key.created_at)}</td><td data-label="${t('expires')}">${key.expires_at ? when(context, key.expires_at) : '—'}</td>
<td data-label="${t('actions')}">${model.can_keys && key.status === 'active' ? html`<form method="post" action="/dashboard/api-keys/${key.id}/roll" class="filters">${csrfField(context)}<div><label for="grace-${key.id}">${t('grace_hours')}</label><input id="grace-${key.id}" name="grace_hours" value="24" size="3" inputmode="numeric"></div><div><input type="checkbox" id="confirm-roll-${key.id}" name="confirm" value="yes" required><label for="confirm-roll-${key.id}">${t('confirm_roll')}</label></div><button type="submit" class="secondary roll-key">${t('roll')}</button></form>` : ''}</td></tr>`,
  );
  const logs = shown.map(
    (key) =>
      html`<details class="request-log" id="requests-${key.id}"><summary>${t('key')} <span class="mono">${key.hint}</span> (${model.requests.get(key.id)?.length ?? 0})</summary>${requestLog(context, model.requests.get(key.id) ?? [])}</details>`,
  );
  const endpoints = model.endpoints.map(
    (
      endpoint,
    ) => html`<tr><td class="mono" data-label="${t('url')}">${endpoint.url}</td><td data-label="${t('events')}">${endpoint.enabled_events.map((type, index) => html`${index ? ', ' : ''}${type === '*' ? '*' : eventLabel(context, type)}`)}</td><td data-label="${t('description')}">${endpoint.description ?? ''}</td><td data-label="${t('status')}">${statusBadge(context, endpoint.disabled ? 'disabled' : 'enabled')}${endpoint.previous_secret_expires_at ? html`<br><span class="muted">${when(context, endpoint.previous_secret_expires_at)}</span>` : ''}</td>
<td data-label="${t('actions')}">${
      model.can_webhooks
        ? html`<div class="actions">${endpoint.disabled ? '' : html`<form method="post" action="/dashboard/webhook-endpoints/${endpoint.id}/test">${csrfField(context)}<button type="submit" class="secondary send-test">${t('send_test_event')}</button></form>`}
<form method="post" action="/dashboard/webhook-endpoints/${endpoint.id}/${endpoint.disabled ? 'enable' : 'disable'}">${csrfField(context)}<button type="submit" class="secondary ${endpoint.disabled ? 'enable-endpoint' : 'disable-endpoint'}">${t(endpoint.disabled ? 'enable' : 'disable')}</button></form>
<form method="post" action="/dashboard/webhook-endpoints/${endpoint.id}/rotate">${csrfField(context)}<button type="submit" class="secondary rotate-secret">${t('rotate_secret')}</button></form><form method="post" action="/dashboard/webhook-endpoints/${endpoint.id}/reveal">${csrfField(context)}<button type="submit" class="secondary reveal-secret">${t('reveal_secret')}</button></form>
<form method="post" action="/dashboard/webhook-endpoints/${endpoint.id}/delete" class="filters">${csrfField(context)}<div><input type="checkbox" id="confirm-delete-${endpoint.id}" name="confirm" value="yes" required><label for="confirm-delete-${endpoint.id}">${t('confirm_delete')}</label></div><button type="submit" class="danger delete-endpoint">${t('delete')}</button></form></div>`
        : ''
    }</td></tr>`,
  );
  return page(context, {
    title: t('developers'),
    section: 'developers',
    body: html`<h1>${t('developers')}</h1>${flash(model.notice)}${flash(model.error, 'error')}${model.revealed ? html`<div class="flash" role="status" id="revealed">${model.revealed}</div>` : ''}
<p><a href="/docs">${t('api_docs')}</a></p>
<section class="card" id="api-keys"><h2>${t('api_keys')}</h2><table class="cards"><thead><tr><th>${t('kind')}</th><th>${t('hint')}</th><th>${t('status')}</th><th>${t('created')}</th><th>${t('expires')}</th><th>${t('actions')}</th></tr></thead><tbody>${keys}</tbody></table></section>
<section class="card" id="request-log"><h2>${t('request_log', { days: REQUEST_LOG_DAYS })}</h2>${logs.length ? logs : html`<p>${t('none')}</p>`}</section>
<section class="card" id="webhook-endpoints"><h2>${t('webhook_endpoints')} (${t(mode)})</h2>
<table class="cards"><thead><tr><th>${t('url')}</th><th>${t('events')}</th><th>${t('description')}</th><th>${t('status')}</th><th>${t('actions')}</th></tr></thead><tbody>${endpoints.length ? endpoints : html`<tr><td colspan="5">${t('none')}</td></tr>`}</tbody></table>
${
  model.can_webhooks
    ? html`<form method="post" action="/dashboard/webhook-endpoints" class="filters">${csrfField(context)}
<div><label for="endpoint-url">${t('url')}</label><input id="endpoint-url" name="url" type="url" required size="36" placeholder="https://shop.example/webhooks" value="${values['url'] ?? ''}"></div>
<div><label for="endpoint-events">${t('enabled_events')}</label><input id="endpoint-events" name="enabled_events" value="${values['enabled_events'] ?? '*'}" size="24"></div>
<div><label for="endpoint-description">${t('description')}</label><input id="endpoint-description" name="description" size="16" value="${values['description'] ?? ''}"></div>
<div><button type="submit" id="create-endpoint">${t('create')}</button></div></form>`
    : ''
}</section>
<section class="card" id="deliveries"><h2>${t('delivery_log')}</h2>
${model.can_webhooks ? html`<form method="post" action="/dashboard/webhook-deliveries/recover" class="filters">${csrfField(context)}<div><label for="recover-since">${t('recover_since')}</label><input id="recover-since" name="since" type="datetime-local" required></div><div><button type="submit" class="secondary">${t('recover')}</button></div></form>` : ''}
${deliveriesTable(context, model.deliveries, { can_redeliver: model.can_webhooks, back: '/dashboard/developers', events: model.events })}</section>
<section class="card" id="events"><h2>${t('event_log')}</h2><table class="cards"><thead><tr><th>${t('id')}</th><th>${t('type')}</th><th>${t('resource')}</th><th>${t('created')}</th><th>${t('status')}</th></tr></thead><tbody>
${model.events.map((event) => html`<tr><td class="mono" title="${event.id}" data-label="${t('id')}">${event.id.slice(0, 12)}…</td><td data-label="${t('type')}">${eventLabel(context, event.type)}</td><td class="mono" title="${event.resource_id}" data-label="${t('resource')}">${event.resource_id.slice(0, 12)}…</td><td data-label="${t('created')}">${when(context, event.created_at)}</td><td data-label="${t('status')}">${event.delivery_status ? statusBadge(context, event.delivery_status) : '—'}</td></tr>`)}</tbody></table></section>
<section class="card" id="payouts"><h2>${t('payouts_title')}</h2><p>${t('payouts_steps')}</p><p class="muted">${t('payouts_guide')}</p></section>`,
  });
}
