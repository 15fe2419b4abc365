// Preloaded by bunfig.toml before every test file: run-wide teardown.
import { afterAll } from "bun:test";
import { removeTempDirs } from "./helpers/kiln.ts";
import { stopSharedPostgres } from "./helpers/shared-postgres.ts";

afterAll(async () => {
  // The server first: its data dir is one of the temp dirs.
  await stopSharedPostgres();
  removeTempDirs();
});
