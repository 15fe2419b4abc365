// The model id an import takes when the operator names none.

/** A model id from a file or folder name: lowercase, hyphenated, with a version digit (kiln's id rule). */
export function modelIdFrom(name: string): string {
  const base = name.replace(/\.gguf$/i, "").toLowerCase().replace(/[^a-z0-9.]+/g, "-").replace(/^[-.]+|[-.]+$/g, "").replace(/[.-]{2,}/g, "-");
  const id = base || "imported";
  const hyphen = id.indexOf("-");
  return hyphen > 0 && /\d/.test(id.slice(hyphen)) ? id : `${id}-v1`;
}
