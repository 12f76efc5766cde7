import type { Json } from './openapi-operations.ts';

/**
 * One document per audience, cut from the one the routes build: the merchant document (`/openapi.json`: what an
 * integrator calls, with its webhooks) and the operator document (`/openapi-admin.json`: admin and internal
 * operations and the probes). Each keeps only the components, tags and security schemes its operations reach.
 */

type Operation = Json & { security?: Record<string, string[]>[]; tags?: string[] };

const OPERATOR_SCHEMES = new Set(['adminToken', 'internalToken']);
const OPERATOR_TAGS = new Set(['ops']);

/** Whether an operation belongs to the operator's document: its credential is an operator's, or it is a probe. */
export function isOperatorOperation(operation: Operation): boolean {
  const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
  return (
    schemes.some((scheme) => OPERATOR_SCHEMES.has(scheme)) ||
    (operation.tags ?? []).some((tag) => OPERATOR_TAGS.has(tag))
  );
}

/** Every `#/components/<kind>/<name>` reachable from a value, following references into the components. */
function reachableComponents(
  start: unknown,
  components: Record<string, Record<string, unknown>>,
): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const pending: unknown[] = [start];
  while (pending.length > 0) {
    const value = pending.pop();
    if (Array.isArray(value)) {
      pending.push(...value);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string' && child.startsWith('#/components/')) {
        const [kind, name] = child.slice('#/components/'.length).split('/') as [string, string];
        const names = found.get(kind) ?? new Set<string>();
        if (!names.has(name)) {
          names.add(name);
          found.set(kind, names);
          pending.push(components[kind]?.[name]);
        }
      } else {
        pending.push(child);
      }
    }
  }
  return found;
}

/** A copy of `document` with only the operations `keep` accepts, and what they reach. */
function cut(
  document: Json,
  keep: (operation: Operation) => boolean,
  options: { webhooks: boolean; info: Json },
): Json {
  const paths: Record<string, Record<string, Operation>> = {};
  for (const [path, item] of Object.entries(document['paths'] as Record<string, Record<string, Operation>>)) {
    const kept = Object.fromEntries(Object.entries(item).filter(([, operation]) => keep(operation)));
    if (Object.keys(kept).length > 0) paths[path] = kept;
  }
  const webhooks = options.webhooks ? document['webhooks'] : undefined;
  const components = structuredClone(document['components'] ?? {}) as Record<string, Record<string, unknown>>;
  const reached = reachableComponents({ paths, webhooks }, components);
  for (const [kind, entries] of Object.entries(components)) {
    if (kind === 'securitySchemes') continue;
    const names = reached.get(kind) ?? new Set<string>();
    components[kind] = Object.fromEntries(Object.entries(entries).filter(([name]) => names.has(name)));
    if (Object.keys(components[kind]).length === 0) delete components[kind];
  }
  const operations = Object.values(paths).flatMap((item) => Object.values(item));
  const schemes = new Set(
    operations.flatMap((operation) => (operation.security ?? []).flatMap((requirement) => Object.keys(requirement))),
  );
  components['securitySchemes'] = Object.fromEntries(
    Object.entries(components['securitySchemes'] ?? {}).filter(([name]) => schemes.has(name)),
  );
  const tags = new Set(operations.flatMap((operation) => operation.tags ?? []));
  const result: Json = {
    ...document,
    info: options.info,
    tags: ((document['tags'] ?? []) as { name: string }[]).filter((tag) => tags.has(tag.name)),
    paths,
    components,
  };
  if (webhooks) result['webhooks'] = webhooks;
  else delete result['webhooks'];
  return result;
}

export interface SplitDocuments {
  merchant: Json;
  operator: Json;
}

export function splitDocument(document: Json, info: { merchant: Json; operator: Json }): SplitDocuments {
  const merchant = cut(document, (operation) => !isOperatorOperation(operation), {
    webhooks: true,
    info: info.merchant,
  });
  const operator = cut(document, isOperatorOperation, { webhooks: false, info: info.operator });
  return { merchant, operator };
}
