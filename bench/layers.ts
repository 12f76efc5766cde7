/**
 * Where an api process's CPU went, by layer, from a V8 CPU profile (`node --cpu-prof`): each sample's time goes to
 * the innermost frame on its stack that belongs to a layer (so a `writev` under pg's query submit counts as the
 * driver, one under Fastify's reply as the response), and to the HTTP or socket layer when only Node's own frames
 * are on the stack.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export const LAYERS = [
  'HTTP parsing and socket reads',
  'routing and framework (Fastify)',
  'auth and rate limit',
  'validation',
  'idempotency',
  'business logic',
  'batching (GroupCommit)',
  'SQL building (Kysely)',
  'driver (pg, socket writes)',
  'serialization and response writes',
  'logging and request log',
  'metrics (prom-client)',
  'crypto',
  'garbage collection',
  'other native / program',
  'bench instrumentation (statement counting)',
] as const;
export type Layer = (typeof LAYERS)[number];

/** The layer of a frame, or undefined when the frame says nothing (Node internals, natives). */
function layerOfFrame(url: string, name: string): Layer | undefined {
  if (!url) {
    if (name === '(garbage collector)') return 'garbage collection';
    return undefined;
  }
  if (url.includes('/node_modules/')) {
    if (/\/node_modules\/(pg|pg-protocol|pg-pool|pg-types|postgres-)/.test(url)) return 'driver (pg, socket writes)';
    if (url.includes('/node_modules/kysely/')) return 'SQL building (Kysely)';
    if (url.includes('/node_modules/ajv') || url.includes('/fastify/lib/validation')) return 'validation';
    if (
      url.includes('/fast-json-stringify/') ||
      url.includes('/fastify/lib/reply') ||
      url.includes('/fastify/lib/error')
    )
      return 'serialization and response writes';
    if (url.includes('/pino') || url.includes('/sonic-boom/')) return 'logging and request log';
    if (url.includes('/prom-client/')) return 'metrics (prom-client)';
    if (url.includes('/jose/')) return 'crypto';
    if (url.includes('/ioredis/')) return 'auth and rate limit';
    if (url.includes('/fastify') || url.includes('/find-my-way/') || url.includes('/light-my-request/'))
      return 'routing and framework (Fastify)';
    return 'other native / program';
  }
  if (url.startsWith('node:')) return undefined;
  if (url.includes('/bench/')) return 'bench instrumentation (statement counting)';
  if (url.includes('/src/http/schemas') || url.includes('/src/http/conventions'))
    return 'serialization and response writes';
  if (url.includes('/src/http/auth') || url.includes('/src/http/rate-limit') || url.includes('/merchants/credentials'))
    return 'auth and rate limit';
  if (url.includes('/src/http/metrics')) return 'metrics (prom-client)';
  if (url.includes('/src/http/idempotency')) return 'idempotency';
  if (url.includes('/src/http/validation') || url.includes('/src/http/input-guard')) return 'validation';
  if (url.includes('/request-log') || url.includes('/src/lib/log')) return 'logging and request log';
  if (url.includes('/src/lib/group-commit')) return 'batching (GroupCommit)';
  if (url.includes('/src/db/')) return 'SQL building (Kysely)';
  if (url.includes('/src/lib/crypto')) return 'crypto';
  if (url.includes('/src/http/')) return 'routing and framework (Fastify)';
  if (url.includes('/src/')) return 'business logic';
  return undefined;
}

/** Node's own frames, when nothing above says more: HTTP parsing and socket reads, or response writes. */
function nodeLayer(url: string): Layer | undefined {
  if (url.startsWith('node:_http_outgoing') || url.startsWith('node:_http_server')) return undefined;
  if (url.startsWith('node:_http') || url.startsWith('node:net') || url.startsWith('node:internal/stream_base'))
    return 'HTTP parsing and socket reads';
  if (url.startsWith('node:internal/crypto')) return 'crypto';
  return undefined;
}

function layerOfNodes(profile: CpuProfile): (id: number) => Layer | 'idle' {
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const memo = new Map<number, Layer | 'idle'>();
  const layerOf = (id: number): Layer | 'idle' => {
    const known = memo.get(id);
    if (known) return known;
    const node = byId.get(id)!;
    const { functionName, url } = node.callFrame;
    let layer: Layer | 'idle' | undefined;
    // the profiler's own start and stop count as idle
    if (functionName === '(idle)' || url === 'node:inspector') layer = 'idle';
    else if (functionName === '(program)') layer = 'other native / program';
    else {
      // the innermost frame with a layer, walking outwards
      let fallback: Layer | undefined;
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const frame = byId.get(at)!.callFrame;
        if (frame.url === 'node:inspector') {
          layer = 'idle';
          break;
        }
        layer = layerOfFrame(frame.url, frame.functionName);
        if (layer) break;
        if (frame.url.startsWith('node:_http_outgoing')) {
          layer = 'serialization and response writes';
          break;
        }
        fallback ??= nodeLayer(frame.url);
      }
      layer ??= fallback ?? 'other native / program';
    }
    memo.set(id, layer);
    return layer;
  };
  return layerOf;
}

/** Microseconds per layer over the whole profile (idle excluded). */
export function cpuByLayer(profile: CpuProfile): Map<Layer, number> {
  const layerOf = layerOfNodes(profile);
  const totals = new Map<Layer, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const layer = layerOf(profile.samples[i]!);
    if (layer === 'idle') continue;
    totals.set(layer, (totals.get(layer) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  return totals;
}

/** The functions with the most self time (idle excluded), each with the layer it counts in, for the note. */
export function topFunctions(profile: CpuProfile, count = 25): { name: string; us: number }[] {
  const layers = layerOfNodes(profile);
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++)
    self.set(profile.samples[i]!, (self.get(profile.samples[i]!) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const byName = new Map<string, number>();
  for (const node of profile.nodes) {
    const us = self.get(node.id);
    const layer = layers(node.id);
    if (!us || layer === 'idle') continue;
    const file = node.callFrame.url.replace(/^.*\/(node_modules|src)\//, '$1/');
    const name = `${node.callFrame.functionName || '(anonymous)'} ${file} [${layer}]`;
    byName.set(name, (byName.get(name) ?? 0) + us);
  }
  return [...byName]
    .map(([name, us]) => ({ name, us }))
    .sort((a, b) => b.us - a.us)
    .slice(0, count);
}
