import type { DeliveryView, EventView } from '../../webhooks/service.ts';
import { when } from '../format.ts';
import { html, type Html } from '../html.ts';
import { csrfField, eventLabel, statusBadge, type PageContext } from '../layout.ts';

/** How much of a request or response body an attempt shows. */
const BODY_SHOWN_CHARS = 2000;

const truncated = (text: string) => (text.length > BODY_SHOWN_CHARS ? `${text.slice(0, BODY_SHOWN_CHARS)}…` : text);

/** Redeliver means something for a delivery that was sent (failed or succeeded); a skipped one had nowhere to go. */
const REDELIVERABLE = new Set(['failed', 'succeeded']);

/** Each attempt: the request (the event as sent) and the response (status and the start of the body). */
function attemptsDetail(context: PageContext, delivery: DeliveryView, event: EventView | undefined): Html {
  const { t } = context;
  if (!delivery.attempts.length) return html``;
  const request_body = event ? truncated(JSON.stringify(event.payload, null, 2)) : '—';
  return html`<details class="attempts"><summary>${t('attempts')} (${delivery.attempts.length})</summary><ol>${delivery.attempts.map(
    (
      attempt,
    ) => html`<li><p>${when(context, attempt.started_at)} · ${attempt.duration_ms} ms · ${attempt.succeeded ? statusBadge(context, 'succeeded') : statusBadge(context, 'failed')}</p>
<p class="muted">${t('request')}: POST <span class="mono">${attempt.url}</span></p><pre class="body">${request_body}</pre>
<p class="muted">${t('response')}: ${attempt.status_code ?? attempt.error ?? '—'}</p><pre class="body">${attempt.response_excerpt ? truncated(attempt.response_excerpt) : '—'}</pre></li>`,
  )}</ol></details>`;
}

export function deliveriesTable(
  context: PageContext,
  deliveries: DeliveryView[],
  options: { can_redeliver: boolean; back: string; events: EventView[] },
): Html {
  const { t } = context;
  if (!deliveries.length) return html`<p>${t('none')}</p>`;
  const events = new Map(options.events.map((event) => [event.id, event]));
  return html`<table class="deliveries cards"><thead><tr><th>${t('id')}</th><th>${t('type')}</th><th>${t('status')}</th><th class="num">${t('attempts')}</th><th>${t('response')}</th><th>${t('duration')}</th><th>${t('actions')}</th></tr></thead><tbody>
${deliveries.map((delivery) => {
  const last = delivery.attempts.at(-1);
  const redeliver = options.can_redeliver && REDELIVERABLE.has(delivery.status);
  return html`<tr><td class="mono" title="${delivery.id}" data-label="${t('id')}">${delivery.id.slice(0, 8)}…</td><td data-label="${t('type')}">${eventLabel(context, delivery.event_type)}</td><td data-label="${t('status')}">${statusBadge(context, delivery.status)}</td><td class="num" data-label="${t('attempts')}">${delivery.attempt_count}${attemptsDetail(context, delivery, events.get(delivery.event_id))}</td><td data-label="${t('response')}">${last ? `${last.status_code ?? last.error ?? '—'}` : '—'}</td><td data-label="${t('duration')}">${last ? `${last.duration_ms} ms · ${when(context, last.started_at)}` : '—'}</td>
<td id="redeliver-${delivery.id}" data-label="${t('actions')}">${redeliver ? html`<form method="post" action="/dashboard/webhook-deliveries/${delivery.id}/redeliver" hx-post="/dashboard/webhook-deliveries/${delivery.id}/redeliver" hx-target="#redeliver-${delivery.id}" hx-swap="innerHTML">${csrfField(context)}<input type="hidden" name="back" value="${options.back}"><button type="submit" class="secondary redeliver">${t('redeliver')}</button></form>` : ''}</td></tr>`;
})}</tbody></table>`;
}
