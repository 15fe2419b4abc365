// Runtime folder naming and creation for the executable's unpacked native libraries.
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dataDirFrom, prepareDir, runtimeDirCandidates, runtimeKey } from "../../../src/native/runtime-dir.ts";
import { tempDir } from "../../helpers/kiln.ts";

describe("runtimeKey", () => {
  test("is the version plus a hash of the embedded names, independent of order and folder", () => {
    const a = runtimeKey("0.1.0", ["/$bunfs/root/libvips-cpp.so.8.18-61s4p4t6.7", "/$bunfs/root/libonnxruntime.so-02vyvk8y.1"]);
    const b = runtimeKey("0.1.0", ["/other/libonnxruntime.so-02vyvk8y.1", "/x/libvips-cpp.so.8.18-61s4p4t6.7"]);
    expect(a).toBe(b);
    expect(a).toMatch(/^0\.1\.0-[0-9a-f]{12}$/);
  });

  test("changes with the version or with any library's content hash", () => {
    const libs = ["/$bunfs/root/libonnxruntime.so-02vyvk8y.1"];
    expect(runtimeKey("0.1.0", libs)).not.toBe(runtimeKey("0.1.1", libs));
    expect(runtimeKey("0.1.0", libs)).not.toBe(runtimeKey("0.1.0", ["/$bunfs/root/libonnxruntime.so-aaaaaaaa.1"]));
  });

  test("keeps odd version strings out of the path", () => {
    expect(runtimeKey("1.0.0+build/7", [])).toMatch(/^1\.0\.0_build_7-/);
  });
});

describe("dataDirFrom", () => {
  test("follows the flag over the environment, like the config", () => {
    expect(dataDirFrom({ KILN_DATA_DIR: "/srv/a" }, ["--data-dir", "/srv/b", "serve"])).toBe("/srv/b");
    expect(dataDirFrom({ KILN_DATA_DIR: "/srv/a" }, ["doctor"])).toBe("/srv/a");
  });

  test("informational commands do not create a data dir: null unless it exists", () => {
    expect(dataDirFrom({}, ["--version"], () => false)).toBeNull();
    expect(dataDirFrom({ KILN_DATA_DIR: "/srv/a" }, ["help"], () => false)).toBeNull();
    expect(dataDirFrom({ KILN_DATA_DIR: "/srv/a" }, ["--version"], (p) => p === "/srv/a")).toBe("/srv/a");
    expect(dataDirFrom({ KILN_DATA_DIR: "/srv/a" }, ["doctor"], () => false)).toBe("/srv/a");
    expect(dataDirFrom({ KILN_DATA_DIR: "/srv/a" }, [], () => false)).toBe("/srv/a");
  });

  test("is null when the options do not parse (main reports that itself)", () => {
    expect(dataDirFrom({ KILN_PORT: "nope" }, [])).toBeNull();
  });
});

describe("runtimeDirCandidates", () => {
  test("data dir first, then a per-user folder in the temp dir", () => {
    expect(runtimeDirCandidates({ dataDir: "/srv/kiln", key: "0.1.0-abc", tmp: "/tmp", uid: 1000 })).toEqual([
      "/srv/kiln/runtime/0.1.0-abc",
      "/tmp/kiln-1000/runtime/0.1.0-abc",
    ]);
    expect(runtimeDirCandidates({ dataDir: null, key: "k", tmp: "/var/tmp", uid: 0 })).toEqual(["/var/tmp/kiln-0/runtime/k"]);
  });
});

describe("prepareDir", () => {
  const base = () => tempDir("kiln-native-");

  test("creates nested folders", () => {
    const dir = join(base(), "a", "b");
    expect(prepareDir(dir)).toBe(true);
    expect(statSync(dir).isDirectory()).toBe(true);
  });

  test("creates a private root with mode 0700", () => {
    const root = join(base(), "kiln-x");
    expect(prepareDir(join(root, "runtime", "k"), root)).toBe(true);
    expect(statSync(root).mode & 0o777).toBe(0o700);
  });

  test("refuses a private root others can write to, or a symlink", () => {
    const open = join(base(), "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    expect(prepareDir(join(open, "runtime"), open)).toBe(false);
    const real = join(base(), "real");
    mkdirSync(real, { mode: 0o700 });
    const link = join(base(), "link");
    symlinkSync(real, link);
    expect(prepareDir(join(link, "runtime"), link)).toBe(false);
  });

  test("fails (false) where it cannot create", () => {
    const file = join(base(), "file");
    writeFileSync(file, "x");
    expect(prepareDir(join(file, "sub"))).toBe(false);
  });
});
