import pkg from '../../package.json' with { type: 'json' };

declare const __BACKUPD_COMMIT__: string | undefined;

/** What `--version` and the users list's `build` report. The build script stamps the commit. */
export const buildInfo = {
  version: pkg.version,
  commit: typeof __BACKUPD_COMMIT__ === 'string' ? __BACKUPD_COMMIT__ : 'source',
};
