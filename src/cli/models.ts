// `kiln models list`, `kiln models build …` and `kiln models import …` (src/modelgen builds and imports into the models dir).
import { modelsBuildCommand } from "../modelgen/cli.ts";
import { modelsImportCommand } from "../modelgen/import/import-cli.ts";
import type { Config } from "../config.ts";
import { batchLabel } from "../models/padding.ts";
import { scanModels } from "../models/registry.ts";
import type { Out } from "./admin.ts";
import { formatTable } from "./table.ts";

export async function modelsCommand(config: Config, args: string[], out: Out): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "list") {
    const { models, problems } = scanModels(config.modelsDir);
    out(`models dir: ${config.modelsDir}`);
    out(
      formatTable(
        ["id", "context", "dtype", "batch", "capabilities"],
        models.map((m) => [
          m.id,
          String(m.contextLength),
          m.defaultDtype,
          batchLabel(m),
          Object.entries(m.capabilities).filter(([, v]) => v).map(([k]) => k).join(","),
        ]),
      ),
    );
    for (const p of problems) out(`skipped ${p.folder}: ${p.reason}`);
    return 0;
  }
  if (sub === "build") {
    const hasOut = rest.some((a) => a === "--out" || a.startsWith("--out="));
    return modelsBuildCommand(hasOut ? rest : [...rest, "--out", config.modelsDir]);
  }
  if (sub === "import") return modelsImportCommand(rest, config.modelsDir);
  out("usage: kiln models list | kiln models build --preset <name> [--dtype fp32,q4] [--out <dir>] | kiln models import <file.gguf | folder>");
  return 2;
}
