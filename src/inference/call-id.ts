// The core's own id for a tool call: 24 lowercase hex characters from a CSPRNG. Each wire format shows it with
// its own prefix (src/api/<family>/ids.ts); ids clients send back are kept as they are.
export const newCallId = () => crypto.randomUUID().replace(/-/g, "").slice(0, 24);
