// The first thing backupd runs (src/main.ts imports it before anything else): on a Node older
// than 22.15 — no node:sqlite, no zstd in node:zlib — it says so in one line and exits 2
// (configuration), instead of failing later with a stack trace. For this to run before a
// missing built-in is loaded, the bundle loads built-in modules when first used
// (scripts/build.ts, builtinsAtRunTime).

/** The oldest Node that has everything backupd uses; Node 24 LTS is what it is built and tested on. */
export const MIN_NODE = [22, 15] as const;

export function nodeTooOld(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major < MIN_NODE[0] || (major === MIN_NODE[0] && minor < MIN_NODE[1]);
}

if (nodeTooOld(process.versions.node)) {
  process.stderr.write(
    `backupd: needs Node ≥ ${MIN_NODE.join('.')} (Node 24 LTS recommended); this is Node ${process.versions.node}. Install a newer Node, or use the single executable dist/backupd, which brings its own.\n`,
  );
  process.exit(2);
}
