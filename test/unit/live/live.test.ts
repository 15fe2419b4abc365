// The live entries of stored responses: a listener that throws is logged and costs the other listeners nothing; one
// entry per response; the leases of the jobs live here, and a lost one stopping its job.
import { describe, expect, test } from "bun:test";
import { LiveResponses } from "../../../src/live/live.ts";
import type { LiveEvent } from "../../../src/live/live-bus.ts";
import { memoryLogger } from "../../../src/log/logger.ts";

describe("LiveResponses", () => {
  test("a listener that throws: the listener after it still hears every event and the end, and the throw is logged", () => {
    const logger = memoryLogger();
    const live = new LiveResponses(logger);
    live.begin("resp_1", () => {});
    live.listen("resp_1", () => {
      throw new Error("listener broke");
    });
    const heard: (number | null)[] = [];
    live.listen("resp_1", (ev: LiveEvent | null) => heard.push(ev ? ev.sequence : null));
    live.publish("resp_1", { sequence: 0, type: "response.created", json: "{}" });
    live.publish("resp_1", { sequence: 1, type: "response.completed", json: "{}" });
    live.end("resp_1");
    expect(heard).toEqual([0, 1, null]);
    expect(live.isLive("resp_1")).toBe(false);
    const logged = logger.lines.filter((l) => l.msg === "live response listener failed");
    expect(logged.map((l) => [l.level, l.response_id, l.error])).toEqual(Array(3).fill(["error", "resp_1", "Error: listener broke"]));
  });

  test("a response already live is not begun again: its entry stays the running one's", () => {
    const live = new LiveResponses(memoryLogger());
    const aborted: string[] = [];
    live.begin("resp_1", (r) => aborted.push(r));
    expect(() => live.begin("resp_1", () => {})).toThrow("already running here");
    expect(live.abort("resp_1", "cancelled")).toBe(true);
    expect(aborted).toEqual(["cancelled"]);
  });

  test("jobs with a lease are listed for renewal; a lost lease stops its job once, and only under the epoch it ran with", () => {
    const logger = memoryLogger();
    const live = new LiveResponses(logger);
    const lost: string[] = [];
    live.begin("resp_a", () => {});
    live.begin("resp_b", () => {});
    live.begin("resp_plain", () => {});
    live.hold("resp_a", { epoch: 0, lost: () => lost.push("a") });
    live.hold("resp_b", { epoch: 2, lost: () => lost.push("b") });
    expect(live.leased()).toEqual([{ id: "resp_a", epoch: 0 }, { id: "resp_b", epoch: 2 }]);
    expect(live.running()).toEqual(["resp_a", "resp_b", "resp_plain"]);
    live.lose("resp_b", 1);
    live.lose("resp_plain", 0);
    expect(lost).toEqual([]);
    live.lose("resp_a", 0);
    live.lose("resp_a", 0);
    expect(lost).toEqual(["a"]);
    // Winding down, it is no longer renewed, but still running here (so this replica does not claim it back).
    expect(live.leased()).toEqual([{ id: "resp_b", epoch: 2 }]);
    expect(live.running()).toContain("resp_a");
    expect(logger.lines.filter((l) => l.level === "warn").map((l) => l.response_id)).toEqual(["resp_a"]);
  });
});
