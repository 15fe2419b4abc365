// kiln's entry point: config → command. `kiln serve` is the default; the rest are operator commands.
import "./native/preload.ts";
import { ConfigError, loadConfig, stripConfigFlags } from "./config.ts";
import { tiersCommand } from "./cli/access.ts";
import { keysCommand, statusCommand, teamsCommand } from "./cli/admin.ts";
import { billingCommand, usageCommand } from "./cli/billing.ts";
import { doctorCommand } from "./cli/doctor.ts";
import { helpText } from "./cli/help.ts";
import { modelsCommand } from "./cli/models.ts";
import { serve } from "./cli/serve.ts";
import { passwordFromStdin, usersCommand } from "./cli/users.ts";
import { versionText } from "./cli/version.ts";
import { DatabaseOpenError, openConfiguredDatabase } from "./db/client.ts";

async function main(argv: string[]): Promise<number> {
  if (argv[0] === "--version" || argv[0] === "-v" || argv[0] === "version") {
    console.log(versionText());
    return 0;
  }
  let config;
  try {
    config = loadConfig(process.env, argv);
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`kiln: ${e.message}`);
      return 2;
    }
    throw e;
  }
  const [command = "serve", ...args] = stripConfigFlags(argv);
  const out = (line: string) => console.log(line);
  try {
    switch (command) {
      case "serve":
        return serve(config);
      case "keys":
        return keysCommand(await openConfiguredDatabase(config), args, out);
      case "teams":
        return teamsCommand(await openConfiguredDatabase(config), args, out, config);
      case "tiers":
        return tiersCommand(await openConfiguredDatabase(config), config, args, out);
      case "billing":
        return billingCommand(await openConfiguredDatabase(config), args, out);
      case "usage":
        return usageCommand(await openConfiguredDatabase(config), args, out);
      case "status":
        return await statusCommand(await openConfiguredDatabase(config), args, out);
      case "users":
        return usersCommand(await openConfiguredDatabase(config), args, out, passwordFromStdin);
      case "models":
        return modelsCommand(config, args, out);
      case "doctor":
        return doctorCommand({ dataDir: config.dataDir, modelsDir: config.modelsDir, databaseUrl: config.databaseUrl });
      case "help":
      case "--help":
      case "-h":
        out(helpText());
        return 0;
      default:
        console.error(`kiln: unknown command "${command}"\n\n${helpText()}`);
        return 2;
    }
  } catch (e) {
    // Postgres that cannot be reached, logged into or migrated: one line, as for a bad setting.
    if (!(e instanceof DatabaseOpenError)) throw e;
    console.error(`kiln: ${e.message}`);
    return 2;
  }
}

process.exit(await main(Bun.argv.slice(2)));
