// Build-time checks on what goes into the executable: native linkage, and no dev-only code.
import { readDynamicInfo } from "./elf.ts";

/** Libraries every glibc Linux box has; anything else an addon needs must be embedded. */
export const SYSTEM_LIBRARIES = new Set([
  "libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0", "libresolv.so.2",
  "libstdc++.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2",
]);

export interface ElfFile {
  name: string;
  bytes: Uint8Array;
}

/**
 * Problems that would make the executable fail at run time: an embedded library whose SONAME is not the one
 * the preload writes, or an addon or library needing something neither embedded nor on every system.
 */
export function linkageProblems(libs: (ElfFile & { soname: string })[], addons: ElfFile[]): string[] {
  const problems: string[] = [];
  const provided = new Set(libs.map((l) => l.soname));
  for (const lib of libs) {
    const info = readDynamicInfo(lib.bytes);
    if (info.soname !== lib.soname) problems.push(`${lib.name}: SONAME is ${info.soname}, the preload expects ${lib.soname}`);
    for (const dep of info.needed) if (!SYSTEM_LIBRARIES.has(dep)) problems.push(`${lib.name} needs ${dep}, which is not embedded`);
  }
  for (const addon of addons) {
    for (const dep of readDynamicInfo(addon.bytes).needed) {
      if (!SYSTEM_LIBRARIES.has(dep) && !provided.has(dep)) problems.push(`${addon.name} needs ${dep}, which is not embedded`);
    }
  }
  return problems;
}

/** Packages that must never be bundled: dev tools, SDKs used by tests, the model-writing libraries. */
export function devOnlyPackages(pkg: { dependencies?: Record<string, string>; devDependencies?: Record<string, string> }): string[] {
  const runtime = new Set(Object.keys(pkg.dependencies ?? {}));
  return Object.keys(pkg.devDependencies ?? {}).filter((name) => !runtime.has(name));
}

/** Bundle inputs that should not be there: test files, benchmarks, build tooling (build/), and dev-only packages. */
export function forbiddenInputs(inputs: string[], devPackages: string[]): string[] {
  return inputs.filter((input) => {
    const path = input.replace(/\\/g, "/");
    if (/^build\//.test(path)) return true;
    if (/(^|\/)test\//.test(path) && !path.includes("node_modules/")) return true;
    if (/\.(test|load|bench)\.[cm]?[jt]s$/.test(path)) return true;
    const pkg = path.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//)?.[1];
    return pkg !== undefined && devPackages.includes(pkg) && !path.match(/node_modules\/.+\/node_modules\//);
  });
}
