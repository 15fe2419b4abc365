// The lease's timers follow from the lease: renewed at 30% (two renewals may fail before it runs out), looked for at 20%.
import { describe, expect, test } from "bun:test";
import { leaseTiming } from "../../../src/live/lease-timing.ts";
import { loadConfig } from "../../../src/config.ts";

describe("leaseTiming", () => {
  test("the default 5 s lease renews every 1.5 s and looks every second", () => {
    expect(leaseTiming(loadConfig({}, []).leaseMs)).toEqual({ leaseMs: 5000, renewEveryMs: 1500, claimEveryMs: 1000 });
  });

  test("KILN_LEASE_MS sets it (1 s to 10 min)", () => {
    expect(leaseTiming(loadConfig({ KILN_LEASE_MS: "2000" }, []).leaseMs)).toEqual({ leaseMs: 2000, renewEveryMs: 600, claimEveryMs: 400 });
    expect(() => loadConfig({ KILN_LEASE_MS: "999" }, [])).toThrow("KILN_LEASE_MS");
  });
});
