// Which IP addresses a remote media fetch may connect to: every address is parsed to its bytes and checked against
// the special-purpose ranges (IANA's IPv4 and IPv6 registries, cloud metadata endpoints), so no spelling slips past.

/** An address as 4 (IPv4) or 16 (IPv6) bytes. */
type Bytes = Uint8Array;

const LOOPBACK = "a loopback address";
const PRIVATE = "a private address";
const LINK_LOCAL = "a link-local address";
const MULTICAST = "a multicast address";
const UNSPECIFIED = "an unspecified address";
const RESERVED = "a reserved address";
const DOCUMENTATION = "a documentation address";
const METADATA = "a cloud metadata address";

/** Instance-metadata and platform endpoints, named first so the refusal says what they are (one is public). */
const METADATA_ADDRESSES = [
  "169.254.169.254", // AWS, GCP, Azure, OpenStack, DigitalOcean
  "169.254.170.2", // AWS ECS task metadata
  "169.254.0.23", // Tencent Cloud
  "100.100.100.200", // Alibaba Cloud
  "192.0.0.192", // Oracle Cloud
  "168.63.129.16", // Azure WireServer: a public address, so no range below catches it
  "fd00:ec2::254", // AWS over IPv6
  "fd20:ce::254", // GCP over IPv6
];

/** IPv4 ranges no fetch may reach; the first that holds the address names it (so /32s precede their /4). */
const V4_RANGES: [string, number, string][] = [
  ["0.0.0.0", 8, UNSPECIFIED],
  ["10.0.0.0", 8, PRIVATE],
  ["100.64.0.0", 10, "a shared (CGNAT) address"],
  ["127.0.0.0", 8, LOOPBACK],
  ["169.254.0.0", 16, LINK_LOCAL],
  ["172.16.0.0", 12, PRIVATE],
  ["192.0.0.0", 24, RESERVED], // IETF protocol assignments
  ["192.0.2.0", 24, DOCUMENTATION],
  ["192.88.99.0", 24, RESERVED], // the deprecated 6to4 relay anycast
  ["192.168.0.0", 16, PRIVATE],
  ["198.18.0.0", 15, "a benchmarking address"],
  ["198.51.100.0", 24, DOCUMENTATION],
  ["203.0.113.0", 24, DOCUMENTATION],
  ["224.0.0.0", 4, MULTICAST],
  ["255.255.255.255", 32, "the broadcast address"],
  ["240.0.0.0", 4, RESERVED],
];

/** IPv6 ranges no fetch may reach, checked after the prefixes that embed an IPv4 address. */
const V6_RANGES: [string, number, string][] = [
  ["::", 128, UNSPECIFIED],
  ["::1", 128, LOOPBACK],
  ["64:ff9b:1::", 48, "a local-use NAT64 address"],
  ["100::", 64, "a discard-only address"],
  ["2001:db8::", 32, DOCUMENTATION],
  ["2001::", 23, RESERVED], // IETF protocol assignments (Teredo, inside it, is judged by what it embeds)
  ["3fff::", 20, DOCUMENTATION],
  ["fc00::", 7, PRIVATE],
  ["fe80::", 10, LINK_LOCAL],
  ["ff00::", 8, MULTICAST],
];

/** IPv6 prefixes that carry an IPv4 address: judged by the address (or addresses) they carry. */
const V6_EMBEDDING: [string, number, string, (b: Bytes) => Bytes[]][] = [
  ["::ffff:0:0", 96, "an IPv4-mapped form of", (b) => [b.subarray(12, 16)]],
  ["64:ff9b::", 96, "a NAT64 form of", (b) => [b.subarray(12, 16)]],
  ["2002::", 16, "a 6to4 form of", (b) => [b.subarray(2, 6)]],
  // Teredo: the server's address in bytes 4–7, the client's bit-inverted in bytes 12–15.
  ["2001::", 32, "a Teredo form of", (b) => [b.subarray(12, 16).map((x) => ~x & 0xff), b.subarray(4, 8)]],
];

/** The 4 or 16 bytes of an IP address written as text (IPv6 may be bracketed or carry a %zone), or null. */
export function parseIp(text: string): Bytes | null {
  const t = text.replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
  return t.includes(":") ? parseV6(t) : parseV4(t);
}

/** Strict dotted decimal: four parts, 0–255, no leading zeros (which some parsers read as octal). */
function parseV4(t: string): Bytes | null {
  const parts = t.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)) return null;
  return Uint8Array.from(parts.map(Number));
}

function parseV6(t: string): Bytes | null {
  const halves = t.split("::");
  if (halves.length > 2) return null;
  const groups = (s: string) => (s === "" ? [] : s.split(":"));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const all = [...head, ...tail];
  // A trailing dotted IPv4 (::ffff:1.2.3.4) stands for the last two groups.
  const last = all[all.length - 1];
  let v4: Bytes | null = null;
  if (last?.includes(".")) {
    v4 = parseV4(last);
    // Only the very end of the text may be dotted ("1.2.3.4::" is not an address).
    if (!v4 || t.endsWith("::")) return null;
    (tail.length ? tail : head).pop();
  }
  const want = v4 ? 6 : 8;
  const count = head.length + tail.length;
  if (halves.length === 2 ? count > want - 1 : count !== want) return null;
  if (![...head, ...tail].every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return null;
  const words = [...head.map(hex), ...Array<number>(want - count).fill(0), ...tail.map(hex)];
  const out = new Uint8Array(16);
  words.forEach((w, i) => {
    out[2 * i] = w >> 8;
    out[2 * i + 1] = w & 0xff;
  });
  if (v4) out.set(v4, 12);
  return out;
}

const hex = (g: string) => parseInt(g, 16);

/** The tables' prefixes, parsed once. */
const parsed = new Map<string, Bytes>();
const bytesOf = (prefix: string) => parsed.get(prefix) ?? parsed.set(prefix, parseIp(prefix)!).get(prefix)!;

function inPrefix(addr: Bytes, prefix: string, bits: number): boolean {
  const p = bytesOf(prefix);
  if (p.length !== addr.length) return false;
  for (let i = 0; i < bits; i += 8) {
    const mask = bits - i >= 8 ? 0xff : (0xff << (8 - (bits - i))) & 0xff;
    if ((addr[i / 8]! & mask) !== (p[i / 8]! & mask)) return false;
  }
  return true;
}

const sameBytes = (a: Bytes, b: Bytes) => a.length === b.length && a.every((x, i) => x === b[i]);
const v4Text = (b: Bytes) => Array.from(b).join(".");

/**
 * Why no fetch may connect to `address` ("a private address", "an IPv4-mapped form of 127.0.0.1, a loopback
 * address", …), or null when it is a public address. Text that is not an IP address is refused too. With
 * `showEmbedded` false the reason names no address at all ("an IPv4-mapped form of a loopback address"): what a
 * client is told about a name it did not spell as an address, since the address is the operator's internal DNS.
 */
export function forbiddenReason(address: string, showEmbedded = true): string | null {
  const b = parseIp(address);
  if (!b) return "not an IP address";
  return b.length === 4 ? v4Reason(b) : v6Reason(b, showEmbedded);
}

function v4Reason(b: Bytes): string | null {
  if (METADATA_ADDRESSES.some((m) => sameBytes(bytesOf(m), b))) return METADATA;
  return V4_RANGES.find(([p, bits]) => inPrefix(b, p, bits))?.[2] ?? null;
}

function v6Reason(b: Bytes, showEmbedded: boolean): string | null {
  if (METADATA_ADDRESSES.some((m) => sameBytes(bytesOf(m), b))) return METADATA;
  for (const [prefix, bits, form, embedded] of V6_EMBEDDING) {
    if (!inPrefix(b, prefix, bits)) continue;
    for (const v4 of embedded(b)) {
      const why = v4Reason(v4);
      if (why) return showEmbedded ? `${form} ${v4Text(v4)}, ${why}` : `${form} ${why}`;
    }
    return null;
  }
  const named = V6_RANGES.find(([p, bits]) => inPrefix(b, p, bits))?.[2];
  if (named) return named;
  // Outside 2000::/3 nothing is global unicast (IPv4-compatible, site-local, unassigned space).
  return inPrefix(b, "2000::", 3) ? null : RESERVED;
}

/** Loopback itself (127.0.0.0/8 or ::1): the one range a test-only policy switch may open. */
export function isLoopback(address: string): boolean {
  const b = parseIp(address);
  return b !== null && (b.length === 4 ? b[0] === 127 : inPrefix(b, "::1", 128));
}
