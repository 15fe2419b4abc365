// Preloaded by bunfig.toml before every test file: run-wide teardown.
import { afterAll } from "bun:test";
import { removeTempDirs } from "./helpers/kiln.ts";

afterAll(removeTempDirs);
