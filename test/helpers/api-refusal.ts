// The ApiError a promise was refused with; anything else it threw is rethrown, and resolving fails the test.
import { ApiError } from "../../src/errors/api-error.ts";

export async function apiRefusal(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error("expected a refusal");
}

/** The ApiError `f` threw; anything else is rethrown, and returning fails the test. */
export function apiRefusalOf(f: () => unknown): ApiError {
  try {
    f();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error("expected a refusal");
}
