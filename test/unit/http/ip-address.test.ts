import { describe, expect, test } from "bun:test";
import { addressUnit, canonicalIp } from "../../../src/http/ip-address.ts";

describe("IP addresses in one spelling", () => {
  test("IPv6 spelled any way is one address; IPv4-mapped is IPv4; other text is left alone", () => {
    const same = ["fd00::1", "FD00::1", "fd00:0::1", "fd00:0000:0000:0000:0000:0000:0000:0001", "fd00::1%eth0"];
    expect(new Set(same.map(canonicalIp))).toEqual(new Set(["fd00:0:0:0:0:0:0:1"]));
    for (const mapped of ["::ffff:1.2.3.4", "0:0:0:0:0:ffff:1.2.3.4", "::ffff:0102:0304", "::FFFF:1.2.3.4%x"]) expect([mapped, canonicalIp(mapped)]).toEqual([mapped, "1.2.3.4"]);
    expect(canonicalIp("2001:db8::3:4:5:1.2.3.4")).toBe("2001:db8:0:3:4:5:102:304");
    expect(canonicalIp("::1")).toBe("0:0:0:0:0:0:0:1");
    expect(canonicalIp("10.0.0.1")).toBe("10.0.0.1");
    expect(canonicalIp("lb.internal")).toBe("lb.internal");
  });

  test("the unit of a limit: IPv4 as it is, IPv6 by its /64", () => {
    expect(addressUnit("::ffff:192.0.2.1")).toBe("192.0.2.1");
    expect(addressUnit("2001:db8:0:1::5")).toBe("2001:db8:0:1::/64");
    expect(addressUnit("2001:0DB8:0000:0001:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:0:1::/64");
    expect(addressUnit("2001:db8::3:4:5:1.2.3.4")).toBe("2001:db8:0:3::/64");
    expect(addressUnit("::1")).not.toBe(addressUnit("::ffff:1.2.3.4"));
  });
});
