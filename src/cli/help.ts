// `kiln help`: commands and configuration options.
import { OPTIONS } from "../config.ts";
import { formatTable } from "./table.ts";

export function helpText(): string {
  return [
    "kiln: a self-hosted model inference server in one file.",
    "",
    "Commands:",
    "  kiln [serve]                                   start the HTTP server (default)",
    "  kiln keys create --team <team> --name <name>   create an API key (printed once)",
    "  kiln keys list | kiln keys revoke <id>",
    "  kiln keys restrict <id> [--models a,b|all] [--endpoints chat,completions,responses,messages,images,files|all]",
    "  kiln teams create <name> | kiln teams list",
    "  kiln teams set <team> [--tier T|none] [--rpm N|none] [--tpm N|none] [--models …|all] [--endpoints …|all] [--service-tiers default,flex,priority,batch|all] [--tier-prices batch:0.4,…|none]",
    "  kiln tiers set <name> --rpm N --tpm N | kiln tiers list | kiln tiers delete <name>",
    "  kiln billing enable|disable|lapse|reinstate <team>",
    "  kiln billing credit <team> <amount> [--note N] | kiln billing show <team> [--limit N] [--json]",
    "  kiln usage [--team T] [--since YYYY-MM-DD] [--until YYYY-MM-DD] [--json]",
    "  kiln status incident add <title> [--message M] [--status S] [--impact degraded|outage]",
    "  kiln status incident resolve <id> [--message M]",
    "  kiln users add <name> --operator | --team <team>   a dashboard account (password read from stdin)",
    "  kiln users passwd <name> | kiln users list | kiln users remove <name>",
    "  kiln models list                               models found in the models dir, and problems",
    "  kiln models build --preset <name> [--dtype fp32,q4] [--out <dir>]",
    "  kiln models import <file.gguf | folder> [--id <id>] [--dtype int8,q4,q4f16]   an operator's model, compiled once",
    "  kiln doctor                                    check the native pieces on this box",
    "  kiln --version",
    "",
    "Options (flag, or environment variable):",
    formatTable(["flag", "env", "meaning"], OPTIONS.map((o) => [o.flag, o.env, o.help])),
  ].join("\n");
}
