// The address classifier of the fetch policy, by table: IPv4, IPv6, mapped, NAT64, 6to4, Teredo, odd spellings.
import { describe, expect, test } from "bun:test";
import { forbiddenReason, isLoopback, parseIp } from "../../../src/media/ip-ranges.ts";

/** address → why it is refused (null: public). */
const TABLE: [string, string | null][] = [
  // IPv4
  ["8.8.8.8", null],
  ["1.1.1.1", null],
  ["93.184.215.14", null],
  ["127.0.0.1", "a loopback address"],
  ["127.255.1.2", "a loopback address"],
  ["10.0.0.1", "a private address"],
  ["172.16.0.1", "a private address"],
  ["172.31.255.255", "a private address"],
  ["172.32.0.1", null],
  ["192.168.1.1", "a private address"],
  ["169.254.1.1", "a link-local address"],
  ["169.254.169.254", "a cloud metadata address"],
  ["169.254.170.2", "a cloud metadata address"],
  ["100.100.100.200", "a cloud metadata address"],
  ["192.0.0.192", "a cloud metadata address"],
  ["168.63.129.16", "a cloud metadata address"],
  ["168.63.129.17", null],
  ["100.64.0.1", "a shared (CGNAT) address"],
  ["100.127.255.255", "a shared (CGNAT) address"],
  ["100.128.0.1", null],
  ["0.0.0.0", "an unspecified address"],
  ["0.1.2.3", "an unspecified address"],
  ["224.0.0.1", "a multicast address"],
  ["239.255.255.250", "a multicast address"],
  ["255.255.255.255", "the broadcast address"],
  ["240.0.0.1", "a reserved address"],
  ["192.0.0.8", "a reserved address"],
  ["192.88.99.1", "a reserved address"],
  ["192.0.2.10", "a documentation address"],
  ["198.51.100.7", "a documentation address"],
  ["203.0.113.9", "a documentation address"],
  ["198.18.0.1", "a benchmarking address"],
  ["198.19.255.255", "a benchmarking address"],
  ["198.20.0.1", null],
  // IPv6
  ["2606:4700:4700::1111", null],
  ["2001:4860:4860::8888", null],
  ["::", "an unspecified address"],
  ["::1", "a loopback address"],
  ["[::1]", "a loopback address"],
  ["0:0:0:0:0:0:0:1", "a loopback address"],
  ["fc00::1", "a private address"],
  ["fd12:3456::1", "a private address"],
  ["fd00:ec2::254", "a cloud metadata address"],
  ["fd20:ce::254", "a cloud metadata address"],
  ["fe80::1", "a link-local address"],
  ["fe80::1%eth0", "a link-local address"],
  ["febf::1", "a link-local address"],
  ["fec0::1", "a reserved address"],
  ["ff02::1", "a multicast address"],
  ["2001:db8::1", "a documentation address"],
  ["3fff::1", "a documentation address"],
  ["100::1", "a discard-only address"],
  ["2001:2::1", "a reserved address"],
  ["::7f00:1", "a reserved address"], // IPv4-compatible, deprecated
  ["::ffff:0:7f00:1", "a reserved address"], // IPv4-translated
  ["4000::1", "a reserved address"],
  // IPv4 carried in IPv6
  ["::ffff:127.0.0.1", "an IPv4-mapped form of 127.0.0.1, a loopback address"],
  ["::ffff:7f00:1", "an IPv4-mapped form of 127.0.0.1, a loopback address"],
  ["::ffff:a00:1", "an IPv4-mapped form of 10.0.0.1, a private address"],
  ["::ffff:169.254.169.254", "an IPv4-mapped form of 169.254.169.254, a cloud metadata address"],
  ["::ffff:8.8.8.8", null],
  ["64:ff9b::7f00:1", "a NAT64 form of 127.0.0.1, a loopback address"],
  ["64:ff9b::192.168.0.1", "a NAT64 form of 192.168.0.1, a private address"],
  ["64:ff9b::808:808", null],
  ["64:ff9b:1::1", "a local-use NAT64 address"],
  ["2002:7f00:1::", "a 6to4 form of 127.0.0.1, a loopback address"],
  ["2002:a9fe:a9fe::1", "a 6to4 form of 169.254.169.254, a cloud metadata address"],
  ["2002:808:808::1", null],
  // Teredo: server 65.54.227.120, client ~0x80fffffe = 127.0.0.1
  ["2001:0:4136:e378:8000:63bf:80ff:fffe", "a Teredo form of 127.0.0.1, a loopback address"],
  ["2001:0:a00:1:8000:63bf:f7f7:f7f7", "a Teredo form of 10.0.0.1, a private address"],
  ["2001:0:4136:e378:8000:63bf:f7f7:f7f7", null],
  // Not addresses at all
  ["localhost", "not an IP address"],
  ["127.1", "not an IP address"],
  ["0177.0.0.1", "not an IP address"],
  ["2130706433", "not an IP address"],
  ["1.2.3.256", "not an IP address"],
  ["1::2::3", "not an IP address"],
  ["1:2:3:4:5:6:7:8:9", "not an IP address"],
  ["1.2.3.4::", "not an IP address"],
  ["", "not an IP address"],
];

describe("forbiddenReason", () => {
  for (const [address, why] of TABLE) {
    test(`${address || "(empty)"} → ${why ?? "public"}`, () => expect(forbiddenReason(address)).toBe(why));
  }

  test("odd IPv4 spellings reach the classifier normalised by URL parsing, so they are judged as 127.0.0.1", () => {
    for (const spelling of ["2130706433", "0x7f.1", "127.1", "0177.0.0.1", "017700000001", "0x7f000001"]) {
      const host = new URL(`http://${spelling}/`).hostname;
      expect([spelling, host, forbiddenReason(host)]).toEqual([spelling, "127.0.0.1", "a loopback address"]);
    }
    expect(forbiddenReason(new URL("http://0/").hostname)).toBe("an unspecified address");
    expect(new URL("http://[::ffff:127.0.0.1]/").hostname).toBe("[::ffff:7f00:1]");
  });
});

describe("parseIp", () => {
  test("IPv4, IPv6 with compression, embedded IPv4 and brackets give the address's bytes", () => {
    expect(Array.from(parseIp("1.2.3.4")!)).toEqual([1, 2, 3, 4]);
    expect(Array.from(parseIp("[::ffff:1.2.3.4]")!)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4]);
    expect(Array.from(parseIp("1:2:3:4:5:6:7:8")!)).toEqual([0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]);
    expect(Array.from(parseIp("1::8")!)).toEqual([0, 1, ...Array(12).fill(0), 0, 8]);
    expect(parseIp("1:2:3:4:5:6:7::")).not.toBeNull();
    expect(parseIp("::1:2:3:4:5:6:7:8")).toBeNull();
    expect(parseIp("12345::1")).toBeNull();
  });
});

describe("isLoopback", () => {
  test("only 127.0.0.0/8 and ::1: mapped loopback and other ranges stay shut", () => {
    expect(["127.0.0.1", "127.9.9.9", "::1", "[::1]"].map(isLoopback)).toEqual([true, true, true, true]);
    expect(["::ffff:127.0.0.1", "10.0.0.1", "0.0.0.0", "::", "localhost"].map(isLoopback)).toEqual([false, false, false, false, false]);
  });
});
