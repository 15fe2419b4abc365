// File ids: `file-` and 32 random hex characters. The shape is checked before an id reaches the database or the
// storage, so nothing a client writes in a path (`file-../../x`, encoded slashes) can name a stored object.

const hex32 = () => crypto.randomUUID().replace(/-/g, "");

export const newFileId = () => `file-${hex32()}`;

const FILE_ID = /^file-[0-9a-f]{32}$/;

/** Whether `id` has the shape kiln mints (nothing else can exist). */
export const isFileId = (id: string): boolean => FILE_ID.test(id);
