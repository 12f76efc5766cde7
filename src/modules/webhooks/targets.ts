import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup as dnsLookupAsync } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { networkInterfaces } from 'node:os';
import ipaddr from 'ipaddr.js';
import { listeningPorts } from '../../lib/listening.ts';

/**
 * Where a webhook may be sent (SSRF guard). Checked twice: when an endpoint is registered, and on
 * every connection against the address DNS actually returned (a custom `lookup` on the request), so a name that
 * resolves to a public address at registration and to 127.0.0.1 later (DNS rebinding) is still refused.
 *
 * Address classes come from ipaddr.js (every IPv4 spelling, IPv4-mapped IPv6 folded to IPv4 first):
 * - public unicast: always allowed;
 * - loopback, private, unique-local, CGNAT: only with WEBHOOK_ALLOW_PRIVATE_TARGETS (closed deployments, a developer's
 *   own machine; `mpay listen` needs none: it reads the sandbox event stream);
 * - the gateway itself (a port this process listens on, at a loopback, unspecified or local interface address, or
 *   PUBLIC_BASE_URL's origin): never;
 * - everything else (link-local, cloud metadata, multicast, broadcast, unspecified, reserved, 6to4/Teredo/NAT64
 *   forms that embed an IPv4 address): never.
 */
export interface TargetPolicy {
  is_sandbox: boolean;
  allow_private: boolean;
  /** PUBLIC_BASE_URL: the gateway as the world reaches it. */
  self_origin?: string;
}

/** A target the guard refused; the dispatcher records `WEBHOOK_URL_FORBIDDEN: <reason>` as the failed attempt. */
export class TargetForbiddenError extends Error {
  readonly code = 'WEBHOOK_URL_FORBIDDEN';
  readonly reason: string;
  constructor(reason: string) {
    super(reason);
    this.reason = reason;
    this.name = 'TargetForbiddenError';
  }
}

const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200']);
const PRIVATE_RANGES = new Set(['private', 'uniqueLocal', 'carrierGradeNat']);
const REGISTRATION_LOOKUP_TIMEOUT_MS = 2_000;

/** Why `address` may not be a target under `policy`, or null when it may. */
export function refusalFor(address: string, policy: TargetPolicy): string | null {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const parsed = ipaddr.process(address);
  const normal = parsed.toNormalizedString();
  const shown = parsed.toString();
  if (METADATA_ADDRESSES.has(shown) || METADATA_ADDRESSES.has(normal)) return `${shown} is a cloud metadata address`;
  const range = parsed.range();
  if (range === 'unicast') return null;
  if (range === 'loopback')
    return policy.allow_private
      ? null
      : `${shown} is a loopback address (allowed only with WEBHOOK_ALLOW_PRIVATE_TARGETS)`;
  if (PRIVATE_RANGES.has(range)) return policy.allow_private ? null : `${shown} is a private address (${range})`;
  return `${shown} is not a public address (${range})`;
}

/** A target address that is not public: what it answers is not kept (no response excerpt). */
export function isPrivateAddress(address: string): boolean {
  return refusalFor(address, { is_sandbox: false, allow_private: false }) !== null;
}

function localAddresses(): Set<string> {
  const found = new Set<string>();
  for (const list of Object.values(networkInterfaces()))
    for (const entry of list ?? []) found.add(ipaddr.process(entry.address).toNormalizedString());
  return found;
}

/** Why `address`:`port` is the gateway itself, or null. */
function refusalForSelf(address: string, port: number): string | null {
  if (!listeningPorts.has(port) || !ipaddr.isValid(address)) return null;
  const parsed = ipaddr.process(address);
  const range = parsed.range();
  if (range === 'loopback' || range === 'unspecified' || localAddresses().has(parsed.toNormalizedString())) {
    return `${parsed.toString()}:${port} is the gateway's own listening address`;
  }
  return null;
}

function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

function isLocalhostName(host: string): boolean {
  const lower = host.toLowerCase().replace(/\.$/, '');
  return lower === 'localhost' || lower.endsWith('.localhost');
}

/** The checks that need no DNS: scheme, credentials, and a literal or `localhost` host. */
function refusalForUrl(url: URL, policy: TargetPolicy): string | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `scheme ${url.protocol} is not http or https`;
  if (url.username || url.password) return 'credentials in the URL are not allowed';
  const host = bareHost(url.hostname);
  if (host === '') return 'the URL has no host';
  if (policy.self_origin !== undefined && url.origin === new URL(policy.self_origin).origin)
    return `${url.origin} is the gateway itself (PUBLIC_BASE_URL)`;
  if (ipaddr.isValid(host)) return refusalForSelf(host, portOf(url)) ?? refusalFor(host, policy);
  if (isLocalhostName(host)) return refusalForSelf('127.0.0.1', portOf(url)) ?? refusalFor('127.0.0.1', policy);
  return null;
}

/**
 * Registration check: the URL's form, then every address its name resolves to now. A name that does not resolve
 * yet is accepted (it is checked again at every connection).
 */
export async function checkTargetAtRegistration(raw_url: string, policy: TargetPolicy): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw_url);
  } catch {
    return 'not a URL';
  }
  const refused = refusalForUrl(url, policy);
  if (refused) return refused;
  const host = bareHost(url.hostname);
  if (ipaddr.isValid(host) || isLocalhostName(host)) return null;
  let addresses: LookupAddress[];
  try {
    addresses = await Promise.race([
      dnsLookupAsync(host, { all: true }),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('lookup timeout')), REGISTRATION_LOOKUP_TIMEOUT_MS).unref(),
      ),
    ]);
  } catch {
    return null;
  }
  for (const { address } of addresses) {
    const reason = refusalForSelf(address, portOf(url)) ?? refusalFor(address, policy);
    if (reason) return `${host} resolves to ${reason}`;
  }
  return null;
}

/** Connection-time check of the URL's form (a literal host never reaches `lookup`). */
export function checkTargetAtConnect(url: URL, policy: TargetPolicy): void {
  const refused = refusalForUrl(url, policy);
  if (refused) throw new TargetForbiddenError(refused);
}

/**
 * A `lookup` for http.request that resolves as usual and refuses the connection when any address is forbidden
 * (`port`: the URL's, to recognise the gateway's own listening address).
 */
export function guardedLookup(policy: TargetPolicy, port = 0): LookupFunction {
  return ((
    hostname: string,
    options: { all?: boolean; family?: number },
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      for (const { address } of addresses) {
        const reason = refusalForSelf(address, port) ?? refusalFor(address, policy);
        if (reason) return callback(new TargetForbiddenError(`${hostname} resolves to ${reason}`), '');
      }
      const [first] = addresses;
      if (options.all) return callback(null, addresses);
      if (!first) return callback(new Error(`${hostname} has no address`), '');
      callback(null, first.address, first.family);
    });
  }) as LookupFunction;
}
