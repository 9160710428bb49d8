import { readFileSync, statSync } from 'node:fs';
import { ConfigError } from '../../core/config.ts';
import { parseScoutKey, type ScoutKey } from '../archive/x25519.ts';

/** As `age -i`: an identity file larger than this is not an identity file. */
const MAX_BYTES = 16 * 1024 * 1024;

const EXPECTED =
  'an age identity file (one or more AGE-SECRET-KEY-1… lines; "#" comments and blank lines are skipped), ' +
  'as the Scout console\'s "Download key file" saves it, or a Scout key in key_base64';

/** What a line that is not a usable key looks like, said without echoing the line (it may be secret). */
function describeLine(line: string): string {
  if (/^AGE-PLUGIN-/i.test(line)) return 'is an age plugin identity, which backupd cannot use';
  if (/^AGE-SECRET-KEY-1/i.test(line))
    return 'is a damaged AGE-SECRET-KEY-1… identity (bad checksum or length)';
  if (/^age1/.test(line)) return 'is a public key (age1…), not the secret key';
  return 'is neither an AGE-SECRET-KEY-1… identity nor a key_base64 Scout key';
}

/**
 * The Scout keys in the text of a key file, read as `age -i` reads an identity file: `#`
 * comments and blank lines are skipped and every other line must be a key — an
 * `AGE-SECRET-KEY-1…` identity or (backupd's own form) a bare `key_base64`. All keys are
 * returned, duplicates once, so a file with the current and retired keys opens old and new
 * snapshots. `name` says in errors where the text came from.
 */
export function parseIdentityText(content: string, name: string): ScoutKey[] {
  const text = content.replace(/^\uFEFF/, '');
  if (text.startsWith('age-encryption.org/')) {
    throw new ConfigError(
      `${name} is age-encrypted (a passphrase-protected identity or a snapshot), not a key file; ` +
        `decrypt a protected identity first (age -d -o key.txt ${name}) and pass that file`,
    );
  }
  if (text.startsWith('-----BEGIN')) {
    throw new ConfigError(`${name} holds a PEM/SSH key; expected ${EXPECTED}`);
  }
  if (text.includes('\0')) throw new ConfigError(`${name} is not a text file; expected ${EXPECTED}`);
  const keys = new Map<string, ScoutKey>();
  const lines = text.split('\n');
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    let key: ScoutKey;
    try {
      key = parseScoutKey(line);
    } catch {
      throw new ConfigError(
        `${name}, line ${index + 1}: the line ${describeLine(line)}; expected ${EXPECTED}`,
      );
    }
    if (!keys.has(key.fingerprint)) keys.set(key.fingerprint, key);
  }
  if (keys.size === 0) throw new ConfigError(`${name} holds no key; expected ${EXPECTED}`);
  return [...keys.values()];
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of process.stdin) {
    length += (chunk as Buffer).length;
    if (length > MAX_BYTES)
      throw new ConfigError(`standard input is larger than a key file can be; expected ${EXPECTED}`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function readPath(path: string): string {
  try {
    const stat = statSync(path);
    if (stat.isDirectory()) throw new ConfigError(`--key-file ${path} is a folder; expected ${EXPECTED}`);
    if (stat.size > MAX_BYTES)
      throw new ConfigError(`--key-file ${path} is too large for a key file; expected ${EXPECTED}`);
    return readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ConfigError(`--key-file ${path} does not exist`);
    throw new ConfigError(`cannot read --key-file ${path}: ${code ?? (error as Error).message}`);
  }
}

/** `--key-file PATH`: the keys in that file; `-` reads them from standard input. */
export async function readKeyFile(path: string): Promise<ScoutKey[]> {
  if (path === '-') return parseIdentityText(await readStdin(), '--key-file - (standard input)');
  return parseIdentityText(readPath(path), `--key-file ${path}`);
}
