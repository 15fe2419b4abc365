// Types for build/bench-args.mjs, which stays plain JavaScript because Node runs build/bench.mjs.
export declare const SCENARIOS: Record<string, string>;
export declare const GGUF_SCENARIO: string;
export declare const GGUF_ENV: string;
export declare function parseBenchArgs(argv: string[]): { env: Record<string, string>; file: string; rest: string[] } | { error: string };
