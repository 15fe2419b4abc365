// Per-request facts shared by the HTTP wrapper (logging, x-request-id) and the routes (auth, usage rows).
export interface RequestMeta {
  id: string;
  startedAt: number;
  teamId: number | null;
  keyId: number | null;
}

const metas = new WeakMap<Request, RequestMeta>();

export function newRequestId(): string {
  return `req_${crypto.randomUUID().replace(/-/g, "")}`;
}

export function attachMeta(request: Request): RequestMeta {
  const meta: RequestMeta = { id: newRequestId(), startedAt: performance.now(), teamId: null, keyId: null };
  metas.set(request, meta);
  return meta;
}

/** The request's meta; a request that bypassed the wrapper gets one on first use. */
export function metaOf(request: Request): RequestMeta {
  return metas.get(request) ?? attachMeta(request);
}
