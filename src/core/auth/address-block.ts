import { isIP } from 'node:net';

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a dotted IPv4 tail as two groups). */
function ipv6Groups(address: string): number[] {
  const parse = (part: string) =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [Number.parseInt(group, 16)];
          const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
          return [a * 256 + b, c * 256 + d];
        });
  const [head = '', tail] = address.split('::');
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * What a per-address limit counts under: an IPv4 address as it is, an IPv6 address by its /64
 * network (`2001:db8:1:2::/64`). One household, phone or server is given a whole /64 and can
 * pick any address in it, so counting single IPv6 addresses would let it guess without limit.
 */
export function addressBlock(address: string): string {
  const bare = address.split('%')[0] ?? address;
  if (isIP(bare) !== 6) return address;
  const prefix = ipv6Groups(bare.toLowerCase()).slice(0, 4);
  return `${prefix.map((group) => group.toString(16)).join(':')}::/64`;
}
