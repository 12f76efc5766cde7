import type { ApiKeyView } from '../../merchants/keys.ts';
import type { EndpointView } from '../../webhooks/endpoints.ts';
import type { DeliveryView, EventView } from '../../webhooks/service.ts';
import { html, type Html } from '../html.ts';
import { csrfField, eventLabel, flash, page, type PageContext, statusBadge } from '../layout.ts';
import { when } from '../format.ts';
import { deliveriesTable } from './payments.ts';

export interface DevelopersModel {
  keys: ApiKeyView[];
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

export function developersPage(context: PageContext, model: DevelopersModel): string {
  const { t, session } = context;
  const values = model.values ?? {};
  const mode = session?.mode ?? 'live';
  const keys = model.keys
    .filter((key) => (mode === 'live' ? key.kind === 'live' : key.kind !== 'live'))
    .map(
      (key) => html`<tr><td>${statusBadge(context, key.kind)}</td><td class="mono">${key.hint}</td><td>${statusBadge(context, key.status)}</td><td>${when(context, key.created_at)}</td><td>${key.expires_at ? when(context, key.expires_at) : '—'}</td>
<td>${model.can_keys && key.status === 'active' ? html`<form method="post" action="/dashboard/api-keys/${key.id}/roll" class="filters">${csrfField(context)}<label for="grace-${key.id}" class="muted">${t('grace_hours')}</label><input id="grace-${key.id}" name="grace_hours" value="24" size="3" inputmode="numeric"><button type="submit" class="secondary roll-key">${t('roll')}</button></form>` : ''}</td></tr>`,
    );
  const endpoints = model.endpoints.map(
    (endpoint) => html`<tr><td class="mono">${endpoint.url}</td><td>${endpoint.enabled_events.join(', ')}</td><td>${endpoint.description ?? ''}</td><td>${statusBadge(context, endpoint.disabled ? 'disabled' : 'enabled')}${endpoint.previous_secret_expires_at ? html`<br><span class="muted">${when(context, endpoint.previous_secret_expires_at)}</span>` : ''}</td>
<td>${model.can_webhooks ? html`<form method="post" action="/dashboard/webhook-endpoints/${endpoint.id}/rotate">${csrfField(context)}<button type="submit" class="secondary rotate-secret">${t('rotate_secret')}</button></form><form method="post" action="/dashboard/webhook-endpoints/${endpoint.id}/reveal">${csrfField(context)}<button type="submit" class="secondary reveal-secret">${t('reveal_secret')}</button></form>` : ''}</td></tr>`,
  );
  return page(context, {
    title: t('developers'),
    section: 'developers',
    body: html`<h1>${t('developers')}</h1>${flash(model.notice)}${flash(model.error, 'error')}${model.revealed ? html`<div class="flash" role="status" id="revealed">${model.revealed}</div>` : ''}
<p><a href="/docs">${t('api_docs')}</a></p>
<section class="card" id="api-keys"><h2>${t('api_keys')}</h2><table><thead><tr><th>${t('kind')}</th><th>${t('hint')}</th><th>${t('status')}</th><th>${t('created')}</th><th>${t('expires')}</th><th>${t('actions')}</th></tr></thead><tbody>${keys}</tbody></table></section>
<section class="card" id="webhook-endpoints"><h2>${t('webhook_endpoints')} (${t(mode)})</h2>
<table><thead><tr><th>${t('url')}</th><th>${t('events')}</th><th>${t('description')}</th><th>${t('status')}</th><th>${t('actions')}</th></tr></thead><tbody>${endpoints.length ? endpoints : html`<tr><td colspan="5">${t('none')}</td></tr>`}</tbody></table>
${model.can_webhooks ? html`<form method="post" action="/dashboard/webhook-endpoints" class="filters">${csrfField(context)}
<div><label for="endpoint-url">${t('url')}</label><input id="endpoint-url" name="url" type="url" required size="36" placeholder="https://shop.example/webhooks" value="${values['url'] ?? ''}"></div>
<div><label for="endpoint-events">${t('enabled_events')}</label><input id="endpoint-events" name="enabled_events" value="${values['enabled_events'] ?? '*'}" size="24"></div>
<div><label for="endpoint-description">${t('description')}</label><input id="endpoint-description" name="description" size="16" value="${values['description'] ?? ''}"></div>
<div><button type="submit" id="create-endpoint">${t('create')}</button></div></form>` : ''}</section>
<section class="card" id="deliveries"><h2>${t('delivery_log')}</h2>
${model.can_webhooks ? html`<form method="post" action="/dashboard/webhook-deliveries/recover" class="filters">${csrfField(context)}<div><label for="recover-since">${t('recover_since')}</label><input id="recover-since" name="since" type="datetime-local" required></div><div><button type="submit" class="secondary">${t('recover')}</button></div></form>` : ''}
${deliveriesTable(context, model.deliveries, { can_redeliver: model.can_webhooks, back: '/dashboard/developers' })}</section>
<section class="card" id="events"><h2>${t('event_log')}</h2><table><thead><tr><th>${t('id')}</th><th>${t('type')}</th><th>${t('resource')}</th><th>${t('created')}</th><th>${t('status')}</th></tr></thead><tbody>
${model.events.map((event) => html`<tr><td class="mono" title="${event.id}">${event.id.slice(0, 12)}…</td><td>${eventLabel(context, event.type)}</td><td class="mono" title="${event.resource_id}">${event.resource_id.slice(0, 12)}…</td><td>${when(context, event.created_at)}</td><td>${event.delivery_status ? statusBadge(context, event.delivery_status) : '—'}</td></tr>`)}</tbody></table></section>`,
  });
}
