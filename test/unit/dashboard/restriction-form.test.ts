import { describe, expect, test } from "bun:test";
import { PageError } from "../../../src/dashboard/page-error.ts";
import { describeList, parseRestrictionForm } from "../../../src/dashboard/tabs/restriction-form.ts";
import { keyNameProblem } from "../../../src/dashboard/tabs/keys.ts";
import { parseServiceTiersForm } from "../../../src/dashboard/tabs/service-tiers-card.ts";

const form = (pairs: [string, string][]) => new URLSearchParams(pairs);

describe("a key's restrictions from the form", () => {
  test("all, some, or none ticked", () => {
    expect(parseRestrictionForm(form([["models_mode", "all"], ["endpoints_mode", "all"]]), ["m1"])).toEqual({ models: null, endpoints: null });
    expect(parseRestrictionForm(form([["models_mode", "some"], ["models", "m1"], ["models", "m1"], ["endpoints_mode", "some"], ["endpoints", "chat"]]), ["m1", "m2"]))
      .toEqual({ models: ["m1"], endpoints: ["chat"] });
    expect(parseRestrictionForm(form([["models_mode", "some"], ["endpoints_mode", "some"]]), ["m1"])).toEqual({ models: [], endpoints: [] });
  });

  test("an item the server does not offer, or no choice, is a form error", () => {
    expect(() => parseRestrictionForm(form([["models_mode", "some"], ["models", "other"], ["endpoints_mode", "all"]]), ["m1"])).toThrow(PageError);
    expect(() => parseRestrictionForm(form([["models_mode", "all"], ["endpoints_mode", "some"], ["endpoints", "admin"]]), ["m1"])).toThrow(/not one of the endpoints/);
    expect(() => parseRestrictionForm(form([["endpoints_mode", "all"]]), ["m1"])).toThrow(/all models or only some/);
  });

  test("described for tables", () => {
    expect(describeList(null)).toBe("all");
    expect(describeList([])).toBe("none");
    expect(describeList(["a", "b"])).toBe("a, b");
  });
});

describe("a team's service tiers from the form", () => {
  test("the ticked tiers, in the fixed order; none ticked or an unknown one is a form error", () => {
    expect(parseServiceTiersForm(form([["service_tier", "priority"], ["service_tier", "default"], ["service_tier", "default"]]))).toEqual(["default", "priority"]);
    expect(() => parseServiceTiersForm(form([]))).toThrow("Tick at least one service tier.");
    expect(() => parseServiceTiersForm(form([["service_tier", "default"], ["service_tier", "gold"]]))).toThrow('"gold" is not a service tier.');
  });
});

describe("key names", () => {
  test("needed, at most 100 characters, no control characters", () => {
    expect(keyNameProblem("")).toContain("name");
    expect(keyNameProblem("x".repeat(101))).toContain("100");
    expect(keyNameProblem("a\u0007b")).toContain("control");
    expect(keyNameProblem("ci\u202Eyek")).toContain("invisible");
    expect(keyNameProblem("c\u200Bi")).toContain("invisible");
    expect(keyNameProblem("ci")).toBeNull();
  });
});
