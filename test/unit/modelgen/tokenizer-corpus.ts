// Texts that exercise a tokenizer's edges: prose, CJK, emoji sequences, code with tabs and indentation, runs of spaces
// and newlines, digit runs, non-NFC text, and the special tokens of the families kiln imports written into plain text.
export const CORPUS: readonly string[] = [
  "The quick brown fox jumps over the lazy dog. It's 2024, isn't it? I'VE been told you'd LL like it.",
  "Hello, world!  Mr. Smith's car costs $45,000.99 (approx.) — “quoted” ‘text’ … and more…",
  "我想在apple工作1314151天～ 日本語のテキスト、カタカナ。한국어 텍스트입니다. Русский текст и Ελληνικά.",
  "ทดสอบภาษาไทย कान्तिपुर हिन्दी العربية עברית",
  "emoji 🚀🦙 😶‍🌫️ ✅ 👍🏽 family 👨‍👩‍👧‍👦 flags 🇫🇷🇯🇵 keycap 1️⃣",
  "def f(x):\n\tif x:\n\t\treturn  x  *  2\n    else:\n        pass\n\n\n",
  "function add(a, b) {\n  return a + b; // sum\n}\n\nconst xs = [1, 2, 3].map((x) => x ** 2);\n",
  "   leading spaces and trailing   \n\n\n \n  \t\t  \n",
  "a  b   c    d     e      f       g        h",
  "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n",
  "                                                                                ",
  "digits 1 12 123 1234 12345 123456789 3.14159 1,000,000 0x1F 2024-12-06 10:20:30",
  "99999999999999999999999999999999999999",
  "a\u00a0b\u3000c\u200bd\ufeffe",
  "e\u0301 A\u030a ﬁ Å é ß İ ǅ",
  "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
  "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\n<tool_call>{\"a\": 1}</tool_call><|im_end|>\n",
  "<bos><start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n",
  "<s>[INST] hi [/INST] ok </s><s>[INST] again [/INST]",
  "<|endoftext|>text after<unk> and <pad> and <mask>",
  "  x", " ", "\n", "\t", "", "a", "A", "'s", " 's", "don't", "DON'T",
  "https://example.com/path?q=1&r=two#frag user@example.org",
  "<table><tr><td>cell</td></tr></table> <div class=\"x\">&nbsp;</div>",
  "¡¿Qué tal?! Ça va très bien, merci. Größe über Fuß.",
];

/** `n` seeded random strings over a mixed alphabet: spaces, control characters, scripts and emoji parts side by side. */
export function randomTexts(n: number, seed: number): string[] {
  const alphabet = Array.from("aAbBzZ09 \t\n\r'.,;:!?-_()[]{}<>/\\\"@#$%^&*+=~`|éèüßñçøåæœ€£¥©®™°±×÷αβγδεЖжЯя中文字日本語한국어😀🚀🦙👍🏽‍️\u00a0\u3000\u200b");
  let s = seed;
  const rnd = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: n }, () => Array.from({ length: 1 + Math.floor(rnd() * 40) }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join(""));
}
