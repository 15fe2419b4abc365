// kiln's own request ids (the x-request-id header, usage rows, log lines): `req_` and 32 hex characters from a CSPRNG.
export const newRequestId = () => `req_${crypto.randomUUID().replace(/-/g, "")}`;
