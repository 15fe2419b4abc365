// The shape of a Responses stream event, apart from the assembler so the item builders it calls need not import it.

/** A stream event before it is given its sequence number. */
export type ResponseEvent = Record<string, unknown> & { type: string };
