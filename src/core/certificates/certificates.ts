import { X509Certificate } from 'node:crypto';
import { clock } from '../clock.ts';
import { badRequest } from '../errors.ts';
import type { FileFolder } from '../hooks/hook-files.ts';
import { trustSystemCertificates } from '../tls/system-ca.ts';

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The CA certificates of a PEM text; a 400 naming the problem for anything else. */
export function parseCaPem(text: string): X509Certificate[] {
  const blocks = text.match(PEM_BLOCK);
  if (!blocks)
    throw badRequest(
      'certificate_file is not a PEM certificate (-----BEGIN CERTIFICATE----- … -----END CERTIFICATE-----)',
    );
  return blocks.map((block, i) => {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(block);
    } catch {
      throw badRequest(`certificate ${i + 1} in certificate_file cannot be parsed`);
    }
    if (!cert.ca)
      throw badRequest(`certificate ${i + 1} (${cert.subject.replace(/\n/g, ', ')}) is not a CA certificate`);
    return cert;
  });
}

/**
 * Uploaded CA certificates, trusted by every outgoing TLS connection of the role in addition
 * to the system store. A change applies at once, without a restart, and survives one.
 */
export function createCertificates(files: FileFolder) {
  async function apply(): Promise<void> {
    const pems: string[] = [];
    for (const file of await files.list()) {
      const text = await files.read(file.filename);
      pems.push(...(text.match(PEM_BLOCK) ?? []));
    }
    trustSystemCertificates(pems);
  }

  return {
    apply,
    async list() {
      const out = [];
      for (const file of await files.list()) {
        const certs = parseCaPem(await files.read(file.filename));
        out.push({
          filename: file.filename,
          certificates: certs.map((c) => ({
            subject: c.subject.replace(/\n/g, ', '),
            issuer: c.issuer.replace(/\n/g, ', '),
            valid_from: new Date(c.validFrom).toISOString(),
            expires_at: new Date(c.validTo).toISOString(),
            expired: new Date(c.validTo).getTime() < clock.now(),
            fingerprint_sha256: c.fingerprint256,
          })),
          subject: certs[0]?.subject.replace(/\n/g, ', ') ?? '',
          issuer: certs[0]?.issuer.replace(/\n/g, ', ') ?? '',
          expires_at: certs[0] ? new Date(certs[0].validTo).toISOString() : null,
        });
      }
      return { certificates: out };
    },
    async add(filename: string, content: Buffer) {
      parseCaPem(content.toString('utf8'));
      await files.write(filename, content);
      await apply();
      return { status: 'saved' as const, filename };
    },
    async remove(filename: string) {
      await files.remove(filename);
      await apply();
      return { status: 'deleted' as const, filename };
    },
  };
}

export type Certificates = ReturnType<typeof createCertificates>;
