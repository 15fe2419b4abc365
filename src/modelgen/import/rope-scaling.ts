// Rotary frequency factors of the long-context scalings kiln takes: Llama 3.1's ("llama3") and the linear one.

export interface Llama3Scaling {
  factor: number;
  lowFreqFactor: number;
  highFreqFactor: number;
  originalContext: number;
}

/**
 * One factor per rotated pair (the pair's frequency is divided by it): pairs whose wavelength is shorter than
 * originalContext / highFreqFactor keep their frequency, those longer than originalContext / lowFreqFactor are slowed
 * by `factor`, and the ones between blend the two smoothly. The same rule as Hugging Face's llama3 rope and the
 * `rope_freqs` tensor llama.cpp's converter writes.
 */
export function llama3FreqFactors(headDim: number, theta: number, s: Llama3Scaling): number[] {
  const lowWavelen = s.originalContext / s.lowFreqFactor;
  const highWavelen = s.originalContext / s.highFreqFactor;
  return Array.from({ length: headDim / 2 }, (_, i) => {
    const wavelen = (2 * Math.PI) / Math.pow(theta, (-2 * i) / headDim);
    if (wavelen < highWavelen) return 1;
    if (wavelen > lowWavelen) return s.factor;
    const smooth = (s.originalContext / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
    return 1 / ((1 - smooth) / s.factor + smooth);
  });
}

/** config.json's `rope_scaling` as frequency factors (undefined: none), or an error naming a scaling kiln does not take. */
export function ropeScalingFactors(scaling: unknown, headDim: number, theta: number): number[] | undefined {
  if (scaling === null || scaling === undefined) return undefined;
  const s = scaling as Record<string, unknown>;
  const type = s.rope_type ?? s.type;
  const num = (k: string): number => {
    const v = s[k];
    if (typeof v !== "number" || !(v > 0)) throw new Error(`config.json: rope_scaling.${k} must be a positive number`);
    return v;
  };
  if (type === "default") return undefined;
  if (type === "linear") return new Array<number>(headDim / 2).fill(num("factor"));
  if (type === "llama3") {
    return llama3FreqFactors(headDim, theta, {
      factor: num("factor"),
      lowFreqFactor: num("low_freq_factor"),
      highFreqFactor: num("high_freq_factor"),
      originalContext: num("original_max_position_embeddings"),
    });
  }
  throw new Error(`config.json: rope_scaling type "${String(type)}" is not supported (kiln takes llama3 and linear)`);
}
