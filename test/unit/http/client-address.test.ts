import { describe, expect, test } from "bun:test";
import { clientAddress } from "../../../src/http/client-address.ts";

describe("the client's address", () => {
  test("the socket's peer unless it is a trusted proxy", () => {
    expect(clientAddress("203.0.113.9", "198.51.100.1", [])).toBe("203.0.113.9");
    expect(clientAddress("203.0.113.9", "198.51.100.1", ["10.0.0.1"])).toBe("203.0.113.9");
    expect(clientAddress("::ffff:10.0.0.1", "198.51.100.1", ["10.0.0.1"])).toBe("198.51.100.1");
    expect(clientAddress(null, "198.51.100.1", ["10.0.0.1"])).toBeNull();
    // Compared by value, however the proxy's address was written.
    expect(clientAddress("fd00::1", "198.51.100.7", ["FD00:0::1"])).toBe("198.51.100.7");
  });

  test("X-Forwarded-For read from the right, past trusted proxies only: a client cannot name itself someone else", () => {
    expect(clientAddress("10.0.0.1", "1.2.3.4, 198.51.100.1", ["10.0.0.1"])).toBe("198.51.100.1");
    expect(clientAddress("10.0.0.1", "1.2.3.4, 198.51.100.1, 10.0.0.2", ["10.0.0.1", "10.0.0.2"])).toBe("198.51.100.1");
    expect(clientAddress("10.0.0.1", "10.0.0.2", ["10.0.0.1", "10.0.0.2"])).toBe("10.0.0.2");
    expect(clientAddress("10.0.0.1", "unknown", ["10.0.0.1"])).toBe("10.0.0.1");
    expect(clientAddress("10.0.0.1", null, ["10.0.0.1"])).toBe("10.0.0.1");
  });
});
