// Flag parsing shared by `kiln models build` and `kiln models import`: `--name value` or `--name=value`, switches, and
// at most one positional argument where the command takes one.

export interface ParsedFlags {
  flags: Map<string, string>;
  switches: Set<string>;
  positional?: string;
}

export function parseFlags(argv: string[], names: readonly string[], switches: readonly string[], takesPositional: boolean): ParsedFlags | { error: string } {
  const out: ParsedFlags = { flags: new Map(), switches: new Set() };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m) {
      if (!takesPositional || out.positional !== undefined) return { error: `unexpected argument "${a}"` };
      out.positional = a;
      continue;
    }
    const name = m[1]!;
    if (switches.includes(name) && m[2] === undefined) {
      out.switches.add(name);
      continue;
    }
    if (!names.includes(name)) return { error: `unknown flag --${name}` };
    const value = m[2] ?? argv[++i];
    if (value === undefined || value === "") return { error: `--${name} needs a value` };
    out.flags.set(name, value);
  }
  return out;
}

/**
 * The front of a `kiln models …` command: `--help` prints the usage (exit 0), bad arguments print the reason and the
 * usage (exit 2); otherwise the parsed arguments.
 */
export function commandArgs<T>(command: string, usage: string, argv: string[], parse: (argv: string[]) => T | { error: string }): T | { exit: number } {
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(usage);
    return { exit: 0 };
  }
  const args = parse(argv);
  if (args && typeof args === "object" && "error" in args) {
    console.error(`kiln models ${command}: ${args.error}\n${usage}`);
    return { exit: 2 };
  }
  return args as T;
}
