// Reading a ListMultipartUploads answer (uploads, their start times, the next page's markers; escaped keys) and
// choosing the stale uploads, on answers shaped like S3's own.
import { describe, expect, test } from "bun:test";
import { parseUploadList, staleUploads } from "../../../src/files/s3-uploads.ts";

const PAGE = `<?xml version="1.0" encoding="UTF-8"?>
<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Bucket>bucket</Bucket>
  <KeyMarker></KeyMarker>
  <UploadIdMarker></UploadIdMarker>
  <NextKeyMarker>files/file-b</NextKeyMarker>
  <NextUploadIdMarker>YW55IGlkZWEgd2h5IGVsdmluZydzIHVwbG9hZCBmYWlsZWQ</NextUploadIdMarker>
  <Prefix>files/</Prefix>
  <MaxUploads>2</MaxUploads>
  <IsTruncated>true</IsTruncated>
  <Upload>
    <Key>files/file-a</Key>
    <UploadId>VXBsb2FkIElEIGZvciBlbHZpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA</UploadId>
    <Initiator><ID>arn:aws:iam::111122223333:user/some-user-11116a31-17b5-4fb7-9df5-b288870f11xx</ID><DisplayName>umat-user-11116a31-17b5-4fb7-9df5-b288870f11xx</DisplayName></Initiator>
    <Owner><ID>75aa57f09aa0c8caeab4f8c24e99d10f8e7faeebf76c078efc7c6caea54ba06a</ID><DisplayName>OwnerDisplayName</DisplayName></Owner>
    <StorageClass>STANDARD</StorageClass>
    <Initiated>2010-11-10T20:48:33.000Z</Initiated>
  </Upload>
  <Upload>
    <Key>files/file-b &amp; &lt;c&gt;</Key>
    <UploadId>YW55IGlkZWEgd2h5IGVsdmluZydzIHVwbG9hZCBmYWlsZWQ</UploadId>
    <StorageClass>STANDARD</StorageClass>
    <Initiated>2010-11-10T20:49:33.000Z</Initiated>
  </Upload>
</ListMultipartUploadsResult>`;

describe("parseUploadList", () => {
  test("the uploads with their keys (unescaped), ids and start times, and the markers of the next page", () => {
    expect(parseUploadList(PAGE)).toEqual({
      uploads: [
        { key: "files/file-a", uploadId: "VXBsb2FkIElEIGZvciBlbHZpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA", initiatedMs: Date.UTC(2010, 10, 10, 20, 48, 33) },
        { key: "files/file-b & <c>", uploadId: "YW55IGlkZWEgd2h5IGVsdmluZydzIHVwbG9hZCBmYWlsZWQ", initiatedMs: Date.UTC(2010, 10, 10, 20, 49, 33) },
      ],
      next: { keyMarker: "files/file-b", uploadIdMarker: "YW55IGlkZWEgd2h5IGVsdmluZydzIHVwbG9hZCBmYWlsZWQ" },
    });
  });

  test("a last page has no next markers; an empty one has no uploads", () => {
    const last = PAGE.replace("<IsTruncated>true</IsTruncated>", "<IsTruncated>false</IsTruncated>");
    expect(parseUploadList(last)!.next).toBeNull();
    expect(parseUploadList('<ListMultipartUploadsResult xmlns="x"><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>')).toEqual({ uploads: [], next: null });
  });

  test("an answer that is not a ListMultipartUploadsResult (an object listing, an error) is null", () => {
    expect(parseUploadList('<?xml version="1.0"?><ListBucketResult><Name>b</Name></ListBucketResult>')).toBeNull();
    expect(parseUploadList("<Error><Code>NotImplemented</Code></Error>")).toBeNull();
    expect(parseUploadList("")).toBeNull();
  });
});

describe("staleUploads", () => {
  test("uploads started before the cut-off, and those without a readable date; not the ones after", () => {
    const u = (key: string, initiatedMs: number) => ({ key, uploadId: key, initiatedMs });
    const list = [u("old", 1000), u("edge", 2000), u("new", 3000), u("undated", NaN)];
    expect(staleUploads(list, 2000).map((x) => x.key)).toEqual(["old", "undated"]);
  });
});
