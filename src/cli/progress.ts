import { formatBytes } from '../shared/byte-sizes.ts';
/**
 * A progress bar on a terminal's stderr (redrawn in place); otherwise plain lines every 10%
 * on stdout, so a failure still leaves exactly one line on stderr.
 */
export function createProgress(label: string) {
  const stream: NodeJS.WriteStream = process.stderr.isTTY ? process.stderr : process.stdout;
  let lastPercent = -1;
  let lastDraw = 0;
  const started = performance.now();
  /** Time left at the rate so far (after a second, so the first reads do not set it). */
  const eta = (done: number, total: number) => {
    const seconds = (performance.now() - started) / 1000;
    if (total <= 0 || done <= 0 || done >= total || seconds < 1) return '';
    const left = Math.ceil(((total - done) * seconds) / done);
    return `, ${left >= 60 ? `${Math.floor(left / 60)} min ${left % 60} s` : `${left} s`} left`;
  };
  return {
    update(done: number, total: number) {
      const percent = total > 0 ? Math.min(100, Math.floor((done / total) * 100)) : 0;
      if (stream.isTTY) {
        const now = Date.now();
        if (now - lastDraw < 100 && percent !== 100) return;
        lastDraw = now;
        const width = 30;
        const filled = Math.round((percent / 100) * width);
        stream.write(
          `\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${percent}% ${formatBytes(done)}${total ? ` / ${formatBytes(total)}` : ''}${eta(done, total)}\x1b[K`,
        );
      } else if (total > 0 && percent >= lastPercent + 10) {
        lastPercent = percent - (percent % 10);
        stream.write(
          `${label}: ${lastPercent}% (${formatBytes(done)} of ${formatBytes(total)}${eta(done, total)})\n`,
        );
      }
    },
    done() {
      if (stream.isTTY) stream.write('\n');
    },
  };
}
