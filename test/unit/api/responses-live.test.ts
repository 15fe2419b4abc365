// The live entries of stored responses: a listener that throws is logged and costs the other listeners nothing.
import { describe, expect, test } from "bun:test";
import { LiveResponses } from "../../../src/api/responses/live.ts";
import type { LiveEvent } from "../../../src/api/responses/live-bus.ts";
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
});
