/**
 * Where an endpoint's host points, and whether the service may call it (docs/decisions.md#webhooks):
 * loopback, private, link-local and unspecified addresses are refused unless the configuration
 * allows them. Checked at creation and again before every attempt, whose connection then goes to
 * the very address checked (no second lookup an attacker's DNS could answer differently).
 */
import { Effect } from "effect"
import { lookup } from "node:dns/promises"
import { BlockList, isIP } from "node:net"

const refused = new BlockList()
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16]
] as const)
  refused.addSubnet(net, prefix, "ipv4")
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10]
] as const)
  refused.addSubnet(net, prefix, "ipv6")

/** Whether `address` (an IP) is loopback, private, link-local or unspecified. */
export const isPrivateAddress = (address: string): boolean => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped !== null) return refused.check(mapped[1]!, "ipv4")
  const family = isIP(address)
  return family === 4 ? refused.check(address, "ipv4") : family === 6 ? refused.check(address, "ipv6") : true
}

export interface Target {
  readonly address: string
  readonly family: 4 | 6
}

/** Why `resolveTarget` refuses a host that is or resolves to such an address (the 400's words at creation). */
export const privateAddressProblem = "must not be or resolve to a loopback, private, link-local or unspecified address"
/** Why `resolveTarget` finds no address for a host. */
const unresolvedProblem = "its host does not resolve"

/**
 * What an endpoint's delivery log and the operator say of a URL the address rules refuse (an
 * endpoint registered while they allowed it: under the simulator, then started with a real provider).
 */
export const refusedByAddressRules =
  "the URL is refused by the address rules: its host is or resolves to a loopback, private, link-local or unspecified address"

/** The URL's host without IPv6 brackets. */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1")

/** The address to connect to for `url`, or why there is none the service may use. */
export const resolveTarget = (url: URL, allowPrivate: boolean): Effect.Effect<Target, string> =>
  Effect.gen(function* () {
    const host = hostOf(url)
    const literal = isIP(host)
    const addresses: ReadonlyArray<{ address: string; family: number }> =
      literal !== 0
        ? [{ address: host, family: literal }]
        : yield* Effect.tryPromise({ try: () => lookup(host, { all: true }), catch: () => unresolvedProblem })
    if (addresses.length === 0) return yield* Effect.fail(unresolvedProblem)
    if (!allowPrivate && addresses.some((a) => isPrivateAddress(a.address))) {
      return yield* Effect.fail(privateAddressProblem)
    }
    const first = addresses[0]!
    return { address: first.address, family: first.family === 6 ? 6 : 4 } as const
  })
