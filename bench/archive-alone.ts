/**
 * The Scout's archive stage alone, as the Scout runs it in a backup (src/scout/backup/stage.ts):
 * the walk streamed into tar → zstd → age (src/scout/archive/pipeline.ts) with the snapshot's
 * fingerprints computed on the way and the extended attributes listed beside it, into one file.
 * bench/scout.ts times it like the reference pipeline. In a backup the upload to the Station
 * runs at the same time (streamed upload), so the `archiving` phase of `/api/status` there
 * measures both sharing the machine, not the archive stage alone.
 *
 * Usage: node bench/archive-alone.ts <folder> <archive file>
 */
import { basename } from 'node:path';
import { writeArchive } from '../src/scout/archive/pipeline.ts';
import { generateScoutKey } from '../src/scout/archive/x25519.ts';
import { listXattrs } from '../src/scout/archive/xattr-scan.ts';
import { parseMarker } from '../src/scout/jobs/marker.ts';
import { walkJob } from '../src/scout/jobs/walk.ts';
import { WalkFingerprints } from '../src/scout/jobs/walk-fingerprints.ts';

const [jobDir, outPath] = process.argv.slice(2);
if (!jobDir || !outPath) throw new Error('usage: node bench/archive-alone.ts <folder> <archive file>');
const { config, error } = parseMarker('', basename(jobDir));
if (!config) throw new Error(error);
const fingerprints = new WalkFingerprints([{}, { counts: (outcome) => outcome === 'archived' }]);
const result = await writeArchive({
  jobDir,
  // Walked as a backup's archive walks (src/scout/backup/stage.ts).
  entries: walkJob(jobDir, config, { fingerprints, filesExaminedByOpener: true }),
  followSymlinks: config.follow_symlinks,
  xattrs: listXattrs(jobDir, { followSymlinks: config.follow_symlinks }),
  recipient: generateScoutKey().publicKey,
  outPath,
});
console.log(JSON.stringify({ size: result.size, skipped: result.skipped.length }));
