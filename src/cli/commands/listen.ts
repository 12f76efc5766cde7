import { parseArgs } from 'node:util';
import { CliError, type CliContext, type CommandGroup } from '../context.ts';

/** Waits between reconnections after the stream drops (the gateway restarted, a proxy timed it out). */
const RECONNECT_DELAY_MS = 1_000;

interface StreamedWebhook {
  id: string;
  type: string;
  headers: Record<string, string>;
  body: string;
}

/** Splits a server-sent-events byte stream into messages: `{event, data, id}` per blank-line-terminated block. */
async function* messages(
  stream: ReadableStream<Uint8Array>,
): AsyncGenerator<{ event: string; data: string; id?: string }> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of stream) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
        else if (field === 'id') id = value;
      }
      if (data.length > 0) yield { event, data: data.join('\n'), ...(id === undefined ? {} : { id }) };
    }
  }
}

function summaryOf(webhook: StreamedWebhook): string {
  try {
    const event = JSON.parse(webhook.body) as { payment_id?: string; sandbox?: boolean };
    return `${webhook.type} ${webhook.id}${event.payment_id ? ` payment ${event.payment_id}` : ''}${event.sandbox ? ' [sandbox]' : ''}`;
  } catch {
    return `${webhook.type} ${webhook.id}`;
  }
}

async function forward(
  context: CliContext,
  target: string | undefined,
  webhook: StreamedWebhook,
  print_json: boolean,
): Promise<void> {
  if (print_json) context.stdout.write(`${webhook.body}\n`);
  const summary = summaryOf(webhook);
  if (!target) {
    context.stdout.write(`${new Date().toISOString()}  <-- ${summary}\n`);
    return;
  }
  try {
    // The exact bytes and signature headers the gateway produced go on unchanged, so the handler verifies them.
    const forwarded = await fetch(target, {
      method: 'POST',
      headers: webhook.headers,
      body: webhook.body,
      signal: AbortSignal.timeout(10_000),
    });
    await forwarded.arrayBuffer();
    context.stdout.write(`${new Date().toISOString()}  --> ${summary}  [${forwarded.status}]\n`);
  } catch (error) {
    context.stdout.write(
      `${new Date().toISOString()}  --> ${summary}  [forward failed: ${(error as Error).message}]\n`,
    );
  }
}

/**
 * Like `stripe listen`: reads the gateway's sandbox event stream (GET /v1/sandbox/events/stream, server-sent events),
 * prints the stream's signing secret, shows each event and forwards it, body and signature intact, to --forward-to.
 * Nothing is registered on the gateway and nothing listens on this machine, so it works against a remote gateway.
 * Needs a test or sandbox key: live events never reach a developer's machine. Reconnects (resuming after the last
 * event) when the stream drops; Ctrl-C stops it.
 */
const listen: CommandGroup = {
  summary: 'receive sandbox events from the gateway and forward them, signature intact, to your handler',
  usage:
    'mpay --api-key SANDBOX_KEY listen [--forward-to URL] [--events TYPE,TYPE] [--print-json]\n' +
    '  prints the signing secret of this session; --events filters (default: all)',
  async run(args, context) {
    const { values } = parseArgs({
      args,
      options: {
        'forward-to': { type: 'string' },
        events: { type: 'string' },
        'print-json': { type: 'boolean', default: false },
      },
    });
    const target = values['forward-to'];
    if (target !== undefined && !/^https?:\/\//.test(target)) throw new CliError(`usage: ${listen.usage}`, 2);
    const events = values.events
      ?.split(',')
      .map((type) => type.trim())
      .filter(Boolean);
    if (events !== undefined && events.length === 0)
      throw new CliError('--events needs at least one event type (or leave it out for all)', 2);
    if (!context.api_key) throw new CliError('mpay listen needs --api-key (a test or sandbox key)', 2);

    const stop = new AbortController();
    const stopping = () => stop.abort();
    process.once('SIGINT', stopping);
    process.once('SIGTERM', stopping);
    const url = `${context.url}/v1/sandbox/events/stream${events ? `?events=${encodeURIComponent(events.join(','))}` : ''}`;
    let last_event_id: string | undefined;
    let secret: string | undefined;
    let announced = false;
    try {
      while (!stop.signal.aborted) {
        let response: Response;
        try {
          response = await fetch(url, {
            headers: {
              'x-api-key': context.api_key,
              accept: 'text/event-stream',
              ...(last_event_id ? { 'last-event-id': last_event_id } : {}),
              ...(secret ? { 'x-listen-secret': secret } : {}),
            },
            signal: stop.signal,
          });
        } catch (error) {
          if (stop.signal.aborted) break;
          if (!announced) throw new CliError(`cannot reach ${context.url}: ${(error as Error).message}`);
          context.stderr.write(`stream lost (${(error as Error).message}); reconnecting\n`);
          await new Promise((resolve) => setTimeout(resolve, RECONNECT_DELAY_MS));
          continue;
        }
        if (!response.ok || !response.body) {
          const body = (await response.json().catch(() => null)) as {
            error?: { code?: string; message?: string };
          } | null;
          if (response.status === 403)
            throw new CliError('mpay listen needs a test or sandbox key: live events are not sent to a local listener');
          throw new CliError(`${response.status} ${body?.error?.code ?? ''} ${body?.error?.message ?? ''}`.trim());
        }
        try {
          for await (const message of messages(response.body)) {
            if (message.event === 'ready') {
              const ready = JSON.parse(message.data) as { secret: string };
              if (!announced) {
                secret = ready.secret;
                context.stdout.write(`Your webhook signing secret is ${ready.secret} (this listen session's)\n`);
                context.stdout.write(
                  `Ready. Receiving sandbox events from ${context.url}${target ? `, forwarding to ${target}` : ''}; events: ${events?.join(', ') ?? 'all'}. Ctrl-C stops.\n`,
                );
                announced = true;
              }
            } else if (message.event === 'webhook') {
              if (message.id !== undefined) last_event_id = message.id;
              await forward(context, target, JSON.parse(message.data) as StreamedWebhook, values['print-json']);
            }
          }
        } catch (error) {
          if (stop.signal.aborted) break;
          context.stderr.write(`stream lost (${(error as Error).message}); reconnecting\n`);
        }
        if (!stop.signal.aborted) await new Promise((resolve) => setTimeout(resolve, RECONNECT_DELAY_MS));
      }
    } finally {
      process.off('SIGINT', stopping);
      process.off('SIGTERM', stopping);
    }
    context.stdout.write('Stopped.\n');
    return 0;
  },
};
export default listen;
