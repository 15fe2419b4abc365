// Reads the dynamic section of an ELF64 shared object: its SONAME and the libraries it needs (build-time checks).

export interface DynamicInfo {
  soname: string | null;
  needed: string[];
  runpath: string[];
}

const PT_LOAD = 1;
const PT_DYNAMIC = 2;
const DT_NULL = 0n;
const DT_NEEDED = 1n;
const DT_STRTAB = 5n;
const DT_SONAME = 14n;
const DT_RPATH = 15n;
const DT_RUNPATH = 29n;

/** Parses a little-endian ELF64 file (linux-x64 libraries and addons); throws on anything else. */
export function readDynamicInfo(bytes: Uint8Array): DynamicInfo {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, false) !== 0x7f454c46) throw new Error("not an ELF file");
  if (bytes[4] !== 2 || bytes[5] !== 1) throw new Error("not a little-endian ELF64 file");
  const phoff = Number(view.getBigUint64(0x20, true));
  const phentsize = view.getUint16(0x36, true);
  const phnum = view.getUint16(0x38, true);

  const loads: { vaddr: bigint; offset: bigint; filesz: bigint }[] = [];
  let dynamic: { offset: number; size: number } | null = null;
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    const type = view.getUint32(at, true);
    const offset = view.getBigUint64(at + 8, true);
    const vaddr = view.getBigUint64(at + 16, true);
    const filesz = view.getBigUint64(at + 32, true);
    if (type === PT_LOAD) loads.push({ vaddr, offset, filesz });
    if (type === PT_DYNAMIC) dynamic = { offset: Number(offset), size: Number(filesz) };
  }
  if (!dynamic) throw new Error("no dynamic section (a static executable?)");

  const entries: [bigint, bigint][] = [];
  for (let at = dynamic.offset; at + 16 <= dynamic.offset + dynamic.size; at += 16) {
    const tag = view.getBigInt64(at, true);
    if (tag === DT_NULL) break;
    entries.push([tag, view.getBigUint64(at + 8, true)]);
  }
  const strtabAddr = entries.find(([tag]) => tag === DT_STRTAB)?.[1];
  if (strtabAddr === undefined) throw new Error("dynamic section has no string table");
  // DT_STRTAB holds a virtual address: find the loaded segment that maps it to a file offset.
  const seg = loads.find((l) => strtabAddr >= l.vaddr && strtabAddr < l.vaddr + l.filesz);
  if (!seg) throw new Error("string table is outside every loaded segment");
  const strtab = Number(seg.offset + (strtabAddr - seg.vaddr));
  const str = (off: bigint) => {
    const start = strtab + Number(off);
    const end = bytes.indexOf(0, start);
    return new TextDecoder().decode(bytes.subarray(start, end));
  };

  const values = (tag: bigint) => entries.filter(([t]) => t === tag).map(([, v]) => str(v));
  return {
    soname: values(DT_SONAME)[0] ?? null,
    needed: values(DT_NEEDED),
    runpath: [...values(DT_RUNPATH), ...values(DT_RPATH)].flatMap((p) => p.split(":")),
  };
}
