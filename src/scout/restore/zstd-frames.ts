import { Transform, type TransformCallback } from 'node:stream';

/**
 * Cuts a zstd stream into writes that each end at most at one frame's end.
 *
 * Node's zstd decompressor (nodejs/node#64741, open) drops the rest of a write when a frame
 * ends inside it while its output buffer still has room: the next bytes it sees are then the
 * middle of a frame ("Unknown frame descriptor"). Our archives are many frames (one per MiB of
 * tar, src/scout/archive/pipeline.ts), so a restore failed whenever a frame's end fell that way
 * (seen on the 1 GiB bench snapshot, then made of 2 MiB frames, at frame 72 of 551, while
 * `zstd -d` read it fine). The bytes pass through unchanged; only the
 * chunk boundaries move. Unknown data passes through as it is, for zstd to reject.
 */
export function zstdFrameCutter(): Transform {
  type State = 'magic' | 'skippable_size' | 'descriptor' | 'header' | 'block_header' | 'skip' | 'pass';
  let state: State = 'magic';
  let need = 4;
  let got: number[] = [];
  let skip = 0;
  let frameEndsAfterSkip = false;
  let checksum = false;

  const expect = (next: State, bytes: number) => {
    state = next;
    need = bytes;
    got = [];
  };
  const skipThen = (bytes: number, endsFrame: boolean) => {
    state = 'skip';
    skip = bytes;
    frameEndsAfterSkip = endsFrame;
  };
  const le = (bytes: number[]) => bytes.reduce((sum, b, i) => sum + b * 2 ** (8 * i), 0);

  /** Acts on a complete header field; true when the frame ends here. */
  function field(): boolean {
    switch (state) {
      case 'magic': {
        const magic = le(got);
        if (magic === 0xfd2fb528) expect('descriptor', 1);
        else if (magic >>> 4 === 0x184d2a5) expect('skippable_size', 4);
        else state = 'pass';
        return false;
      }
      case 'skippable_size':
        skipThen(le(got), true);
        return false;
      case 'descriptor': {
        const fhd = got[0] ?? 0;
        const single = (fhd >> 5) & 1;
        checksum = ((fhd >> 2) & 1) === 1;
        const fcs = [single, 2, 4, 8][fhd >> 6] ?? 0;
        const rest = (single ? 0 : 1) + ([0, 1, 2, 4][fhd & 3] ?? 0) + fcs;
        if (rest > 0) expect('header', rest);
        else expect('block_header', 3);
        return false;
      }
      case 'header':
        expect('block_header', 3);
        return false;
      case 'block_header': {
        const header = le(got);
        const last = (header & 1) === 1;
        const type = (header >> 1) & 3;
        const size = type === 1 ? 1 : header >>> 3;
        if (type === 3) {
          state = 'pass';
          return false;
        }
        if (!last) skipThen(size, false);
        else skipThen(size + (checksum ? 4 : 0), true);
        if (skip === 0) return afterSkip();
        return false;
      }
      default:
        return false;
    }
  }

  function afterSkip(): boolean {
    if (frameEndsAfterSkip) {
      expect('magic', 4);
      return true;
    }
    expect('block_header', 3);
    return false;
  }

  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      let start = 0;
      let at = 0;
      while (at < chunk.length && state !== 'pass') {
        let frameEnd = false;
        if (state === 'skip') {
          const step = Math.min(skip, chunk.length - at);
          at += step;
          skip -= step;
          if (skip === 0) frameEnd = afterSkip();
        } else {
          got.push(chunk[at] as number);
          at += 1;
          if (got.length === need) frameEnd = field();
        }
        if (frameEnd) {
          this.push(chunk.subarray(start, at));
          start = at;
        }
      }
      if (start < chunk.length) this.push(chunk.subarray(start));
      done();
    },
  });
}
