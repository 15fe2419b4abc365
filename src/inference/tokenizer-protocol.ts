// What the main thread and the tokenizer worker send each other.

export interface EncodeRequest {
  id: number;
  /** The model folder whose tokenizer to use. */
  dir: string;
  /** Text with special tokens already in place (a rendered chat template). */
  text: string;
}

export type EncodeReply = { id: number; ids: Int32Array } | { id: number; error: string };
