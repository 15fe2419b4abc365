// Real storage faults for tests, where the machine allows them (root): a data dir on a small tmpfs that can be filled,
// and database files made immutable (chattr +i). Each returns how to undo it; the test undoes it in `finally`, since
// an immutable file left behind could not even be removed.
import { execFileSync } from "node:child_process";
import { rmSync, statfsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./kiln.ts";

/** Whether this process may mount filesystems and change file attributes (root on Linux). */
export function canFaultStorage(): boolean {
  return process.platform === "linux" && process.getuid?.() === 0;
}

/** A tmpfs of `mib` MiB mounted on a fresh directory; `unmount` lazily detaches it (open files do not keep it busy). */
export function smallDisk(mib: number): { dir: string; fill(leaveBytes: number): void; unfill(): void; unmount(): void } {
  const dir = tempDir("kiln-small-disk-");
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${mib}m,mode=0700`, "tmpfs", dir]);
  const filler = join(dir, "filler.bin");
  return {
    dir,
    /** Takes all but `leaveBytes` of the free space, in one file outside kiln's own. */
    fill(leaveBytes) {
      const s = statfsSync(dir);
      const take = Number(s.bavail) * Number(s.bsize) - leaveBytes;
      writeFileSync(filler, Buffer.alloc(Math.max(0, take)));
    },
    unfill: () => rmSync(filler, { force: true }),
    unmount: () => execFileSync("umount", ["-l", dir]),
  };
}

/** Sets (`on`) or clears the immutable attribute of each file that exists. */
export function setImmutable(paths: string[], on: boolean): void {
  for (const path of paths) {
    try {
      execFileSync("chattr", [on ? "+i" : "-i", path], { stdio: "ignore" });
    } catch (e) {
      // A file that is not there (SQLite's -wal before the first write) has nothing to change; anything else is a failure.
      if (on) throw e;
    }
  }
}
