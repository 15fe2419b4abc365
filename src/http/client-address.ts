// The client's address: the socket's peer, unless that peer is a proxy the operator trusts, whose X-Forwarded-For
// then names the client (read from the right, past any other trusted proxy, since only those entries are vouched for).
import { isIP } from "node:net";
import { canonicalIp } from "./ip-address.ts";

/** Addresses compare by value: "::ffff:10.0.0.1" is "10.0.0.1", "FD00::1" is "fd00:0::1". */
const plain = canonicalIp;

export function clientAddress(peer: string | null, forwardedFor: string | null, trusted: readonly string[]): string | null {
  if (peer === null) return null;
  const trust = new Set(trusted.map(plain));
  if (!trust.has(plain(peer)) || !forwardedFor) return plain(peer);
  const hops = forwardedFor.split(",").map((h) => plain(h.trim())).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (trust.has(hops[i]!)) continue;
    // An entry that is not an address (a proxy that writes names or "unknown") vouches for nobody: the proxy is the client.
    return isIP(hops[i]!) ? hops[i]! : plain(peer);
  }
  return hops[0] ?? plain(peer);
}
