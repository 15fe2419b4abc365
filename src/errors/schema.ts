// typebox schema of the error body, for the OpenAPI document.
import { t } from "elysia";

export const ErrorBody = t.Object({
  error: t.Object({
    message: t.String(),
    type: t.String(),
    param: t.Union([t.String(), t.Null()]),
    code: t.Union([t.String(), t.Null()]),
  }),
});
