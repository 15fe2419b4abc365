// The ChatML-style Jinja chat template (system + tools block, reasoning, tool calls, tool turns), rendered by @huggingface/jinja.

/** Text of a message's content: a string, or the text parts of a content-part array; null renders as nothing. */
const textMacro = (media: boolean) =>
  "{% macro text(c) %}" +
  "{% if c is string %}{{ c }}" +
  "{% elif c %}{% for p in c %}{% if p.type == 'text' or p.type == 'input_text' or p.type == 'output_text' %}{{ p.text }}" +
  // Media models: the Hugging Face convention for multimodal templates, one placeholder per image or audio part.
  (media ? "{% elif p.type == 'image' %}<image>{% elif p.type == 'audio' %}<|audio|>" : "") +
  "{% endif %}{% endfor %}" +
  "{% endif %}" +
  "{% endmacro %}";

const SYSTEM =
  "{% if messages and messages[0].role == 'system' %}" +
  "{% set system_text = text(messages[0].content) %}{% set rest = messages[1:] %}" +
  "{% else %}{% set system_text = '' %}{% set rest = messages %}{% endif %}" +
  "{% if system_text or tools or (messages and messages[0].role == 'system') %}" +
  "<|im_start|>system\n{{ system_text }}" +
  "{% if tools %}" +
  "{% if system_text %}{{ '\\n\\n' }}{% endif %}" +
  "# Tools\n<tools>" +
  "{% for tool in tools %}{{ '\\n' }}{{ tool | tojson }}{% endfor %}" +
  "{{ '\\n' }}</tools>\nTo call a tool reply with <tool_call>\n{\"name\": ..., \"arguments\": {...}}\n</tool_call>" +
  "{% endif %}" +
  "<|im_end|>\n" +
  "{% endif %}";

const ASSISTANT =
  "<|im_start|>assistant\n" +
  "{% if m.reasoning_content %}<think>\n{{ m.reasoning_content }}\n</think>\n{% endif %}" +
  "{{ text(m.content) }}" +
  "{% if m.tool_calls %}{% for tc in m.tool_calls %}" +
  "{% set f = tc.function if tc.function else tc %}" +
  '<tool_call>\n{"name": {{ f.name | tojson }}, "arguments": ' +
  "{% if f.arguments is string %}{{ f.arguments }}{% else %}{{ (f.arguments if f.arguments else {}) | tojson }}{% endif %}" +
  "}\n</tool_call>" +
  "{% endfor %}{% endif %}" +
  "<|im_end|>\n";

const TURNS =
  "{% for m in rest %}" +
  "{% if m.role == 'assistant' %}" +
  ASSISTANT +
  "{% elif m.role == 'tool' %}" +
  "<|im_start|>tool\n<tool_response>\n{{ text(m.content) }}\n</tool_response><|im_end|>\n" +
  "{% else %}" +
  "<|im_start|>{{ m.role }}\n{{ text(m.content) }}<|im_end|>\n" +
  "{% endif %}" +
  "{% endfor %}" +
  "{% if add_generation_prompt %}<|im_start|>assistant\n" +
  // Qwen3's convention: enable_thinking opens the thinking block; false writes an empty one so the model answers at once.
  "{% if enable_thinking is defined %}{% if enable_thinking %}<think>\n{% else %}<think>\n\n</think>\n\n{% endif %}{% endif %}" +
  "{% endif %}";

/**
 * Template shape (ChatML):
 *   <|im_start|>system\n{system}[\n\n]# Tools\n<tools>\n{tool JSON per line}\n</tools>\n…<|im_end|>\n
 *   <|im_start|>assistant\n[<think>\n{reasoning}\n</think>\n]{content}[<tool_call>\n{json}\n</tool_call>…]<|im_end|>\n
 *   <|im_start|>tool\n<tool_response>\n{content}\n</tool_response><|im_end|>\n
 * The blank line before "# Tools" is only written when there is system text. With `enable_thinking` the generation
 * prompt opens a thinking block (`<think>\n`); with `enable_thinking: false` it writes an empty one.
 */
export const CHAT_TEMPLATE = textMacro(false) + SYSTEM + TURNS;

/** The template of a model folder: media models also write `<image>` / `<|audio|>` for `{type: "image" | "audio"}` parts. */
export function chatTemplate(media: boolean): string {
  return textMacro(media) + SYSTEM + TURNS;
}
