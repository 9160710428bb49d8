/**
 * A stored snapshot's file name: `<job>__<YYYY-MM-DDTHH-MM-SSZ>__<fp8>[-N].tar.zst`
 * (snapshot-names.ts), chosen by the Station when the upload is initiated and never changed.
 * It names the snapshot within its job and is the last part of every download address.
 *
 * One meaning, two wire names (both fixed by the published API, so neither is renamed): the
 * `/backup/*` protocol, restore requests, drills and retention previews call it `filename`;
 * `GET /api/overview` calls it `name` (`scouts[].instances[].jobs[].snapshots[].name`). Every
 * type in this module that carries it uses `SnapshotFileName`, so a reader sees it is the same.
 */
export type SnapshotFileName = string;
