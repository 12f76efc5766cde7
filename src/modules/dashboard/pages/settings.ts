import { html } from '../html.ts';
import { csrfField, flash, page, type PageContext } from '../layout.ts';

/** Every zone the runtime knows, the merchant's own first when the list lacks it. */
const ZONES: readonly string[] = Intl.supportedValuesOf('timeZone');

export function settingsPage(
  context: PageContext,
  model: { time_zone: string; can_edit: boolean; notice?: string | undefined; error?: string | undefined },
): string {
  const { t } = context;
  const zones = ZONES.includes(model.time_zone) ? ZONES : [model.time_zone, ...ZONES];
  return page(context, {
    title: t('settings'),
    section: 'settings',
    body: html`<h1>${t('settings')}</h1>${flash(model.notice)}${flash(model.error, 'error')}
<section class="card"><form method="post" action="/dashboard/settings" class="filters">${csrfField(context)}
<div><label for="time-zone">${t('time_zone')}</label><select id="time-zone" name="time_zone" aria-describedby="time-zone-help"${model.can_edit ? '' : html` disabled`}>${zones.map((zone) => html`<option${zone === model.time_zone ? html` selected` : ''}>${zone}</option>`)}</select>
<p class="muted" id="time-zone-help">${t('time_zone_help')}</p></div>
${model.can_edit ? html`<div><button type="submit" id="save-settings">${t('save')}</button></div>` : html`<p class="muted">${t('owners_only')}</p>`}</form></section>`,
  });
}
