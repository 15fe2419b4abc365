// Script entry: `bun build/model/main.ts --preset qwen2-0.5b --dtype q4 --out ./models`.
import { modelsBuildCommand } from "../../src/modelgen/cli.ts";

process.exit(await modelsBuildCommand(process.argv.slice(2)));
