// Extended attributes as pax records, the way GNU tar (`--xattrs --acls`) and bsdtar write
// them: `SCHILY.xattr.<name>` with the attribute's bytes for every attribute, and for POSIX
// ACLs also `SCHILY.acl.access` / `SCHILY.acl.default` in getfacl's text form. GNU tar sets
// the ACL from the xattr record on `tar --xattrs --xattrs-include='*' -x`, but `tar --acls -x`
// replaces the ACL of an entry with no SCHILY.acl record by the plain one from its mode, so
// both are written.
import { paxRecord } from './pax-record.ts';
import type { Xattr } from './xattr-scan.ts';

const ACL_ACCESS = 'system.posix_acl_access';
const ACL_DEFAULT = 'system.posix_acl_default';

/** Tags of the kernel's binary ACL (linux/posix_acl_xattr.h): prefix, and whether an id follows. */
const TAGS: Record<number, [string, boolean]> = {
  1: ['user', false],
  2: ['user', true],
  4: ['group', false],
  8: ['group', true],
  16: ['mask', false],
  32: ['other', false],
};

/**
 * An ACL's binary xattr value (version 2, then 8-byte entries: tag, permissions, id) as text,
 * one `tag:qualifier:rwx` line each, with numeric ids (owners are numeric throughout the
 * archive); null when the value is not one.
 */
export function aclText(value: Buffer): string | null {
  if (value.length < 4 || (value.length - 4) % 8 !== 0 || value.readUInt32LE(0) !== 2) return null;
  let text = '';
  for (let at = 4; at < value.length; at += 8) {
    const tag = TAGS[value.readUInt16LE(at)];
    if (!tag) return null;
    const perm = value.readUInt16LE(at + 2);
    const id = tag[1] ? String(value.readUInt32LE(at + 4)) : '';
    text += `${tag[0]}:${id}:${perm & 4 ? 'r' : '-'}${perm & 2 ? 'w' : '-'}${perm & 1 ? 'x' : '-'}\n`;
  }
  return text;
}

/** `%` and `=` in a name are written %25 and %3D, as GNU tar does (a key cannot hold `=`). */
const keyName = (name: string) => name.replace(/%/g, '%25').replace(/=/g, '%3D');

/** The pax records of an entry's extended attributes. */
export function xattrRecords(xattrs: readonly Xattr[]): Buffer[] {
  const records: Buffer[] = [];
  for (const { name, value } of xattrs) {
    if (name === ACL_ACCESS || name === ACL_DEFAULT) {
      const text = aclText(value);
      if (text !== null)
        records.push(paxRecord(name === ACL_ACCESS ? 'SCHILY.acl.access' : 'SCHILY.acl.default', text));
    }
    records.push(paxRecord(`SCHILY.xattr.${keyName(name)}`, value));
  }
  return records;
}
