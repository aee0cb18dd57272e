/**
 * Finds the stream name in an RTMP client's `publish` command (AMF0: the string "publish", the
 * transaction number, null, then the stream name) in the bytes the client has sent so far. The
 * command is far smaller than a chunk, so it arrives in one piece after the handshake.
 */
const PUBLISH = Buffer.from([0x02, 0x00, 0x07, ...Buffer.from('publish')]);

export function findPublishName(bytes: Buffer): string | null {
  const at = bytes.indexOf(PUBLISH);
  if (at < 0) return null;
  let p = at + PUBLISH.length;
  if (bytes[p] !== 0x00) return null; // transaction id: AMF0 number
  p += 9;
  if (bytes[p] === 0x05) p += 1; // command object: null
  if (bytes[p] !== 0x02 || p + 3 > bytes.length) return null;
  const len = bytes.readUInt16BE(p + 1);
  if (p + 3 + len > bytes.length) return null;
  return bytes.subarray(p + 3, p + 3 + len).toString('utf8');
}
