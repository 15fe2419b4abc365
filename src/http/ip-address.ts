// One spelling per IP address: IPv4 (and IPv4 mapped into IPv6) as dotted quads, IPv6 as eight lowercase groups
// without leading zeros, so addresses compare and group by value, however a proxy or an operator wrote them.
import { isIPv4, isIPv6 } from "node:net";

/** The eight 16-bit groups of an IPv6 address, or null when it is not one (a zone id after % is dropped). */
function ipv6Groups(address: string): number[] | null {
  const plain = address.split("%")[0]!.toLowerCase();
  if (!isIPv6(plain)) return null;
  let text = plain;
  // A dotted IPv4 tail is two groups.
  const dotted = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const left = head ? head.split(":") : [];
  const right = tail === undefined ? [] : tail ? tail.split(":") : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  return groups.length === 8 ? groups.map((g) => parseInt(g, 16)) : null;
}

/** The address in its one spelling; the input unchanged when it is not an IP address. */
export function canonicalIp(address: string): string {
  if (isIPv4(address)) return address;
  const g = ipv6Groups(address);
  if (!g) return address;
  // ::ffff:a.b.c.d is the IPv4 client a.b.c.d, whichever way the six leading groups were written.
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
  return g.map((x) => x.toString(16)).join(":");
}

/** The unit a sign-in limit counts: an IPv4 address, or an IPv6 address's /64 (one host commonly holds a whole /64). */
export function addressUnit(address: string): string {
  const c = canonicalIp(address);
  return c.includes(":") ? `${c.split(":").slice(0, 4).join(":")}::/64` : c;
}
