import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, loadScoutConfig, loadStationConfig } from '../../src/core/config.ts';

const TIB = 1024 ** 4;

describe('station config', () => {
  test('defaults', () => {
    const config = loadStationConfig({}, {});
    const dataDir = resolve('./data/station');
    assert.deepEqual(config, {
      role: 'station',
      host: '0.0.0.0',
      port: 6555,
      dataDir,
      initialAdminPassword: 'admin',
      allowedHosts: { listed: undefined, ownNames: [] },
      trustProxy: [],
      databaseUrl: undefined,
      backupRoot: resolve(dataDir, 'snapshots'),
      stagingDir: resolve(dataDir, 'staging'),
      maxUploadBytes: TIB,
      s3: undefined,
      restoreHintHosts: [],
    });
  });

  test('environment variables are read', () => {
    const config = loadStationConfig(
      {},
      {
        HOST: '127.0.0.1',
        PORT: '7001',
        DATA_DIR: '/srv/backupd',
        INITIAL_ADMIN_PASSWORD: 'first-password',
        DATABASE_URL: 'postgres://u:p@db:5432/backupd',
        BACKUP_ROOT: '/mnt/backups',
        STAGING_DIR: '/mnt/staging',
        MAX_UPLOAD_BYTES: '1048576',
        RESTORE_HINT_HOSTS: 'Scout-1.LAN, [fd00::5] 192.168.1.20',
      },
    );
    assert.deepEqual(config.restoreHintHosts, ['scout-1.lan', 'fd00::5', '192.168.1.20']);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 7001);
    assert.equal(config.dataDir, '/srv/backupd');
    assert.equal(config.initialAdminPassword, 'first-password');
    assert.equal(config.databaseUrl, 'postgres://u:p@db:5432/backupd');
    assert.equal(config.backupRoot, '/mnt/backups');
    assert.equal(config.stagingDir, '/mnt/staging');
    assert.equal(config.maxUploadBytes, 1048576);
  });

  test('backup root and staging dir follow the data dir', () => {
    const config = loadStationConfig({ dataDir: '/var/lib/x' }, {});
    assert.equal(config.backupRoot, '/var/lib/x/snapshots');
    assert.equal(config.stagingDir, '/var/lib/x/staging');
  });

  test('a flag beats its environment variable', () => {
    const config = loadStationConfig(
      { host: '::1', port: '7100', dataDir: '/from/flag' },
      { HOST: '10.0.0.1', PORT: '7200', DATA_DIR: '/from/env', STATE_DIRECTORY: '/from/systemd' },
    );
    assert.equal(config.host, '::1');
    assert.equal(config.port, 7100);
    assert.equal(config.dataDir, '/from/flag');
  });

  test('empty environment variables count as unset', () => {
    const config = loadStationConfig(
      {},
      { HOST: '', PORT: ' ', DATA_DIR: '', DATABASE_URL: '', MAX_UPLOAD_BYTES: '' },
    );
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.port, 6555);
    assert.equal(config.dataDir, resolve('./data/station'));
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.maxUploadBytes, TIB);
  });

  test('STATE_DIRECTORY is used when DATA_DIR is unset, and DATA_DIR beats it', () => {
    assert.equal(loadStationConfig({}, { STATE_DIRECTORY: '/var/lib/backupd' }).dataDir, '/var/lib/backupd');
    assert.equal(
      loadStationConfig({}, { STATE_DIRECTORY: '/var/lib/backupd', DATA_DIR: '/data' }).dataDir,
      '/data',
    );
    // systemd joins several state directories with ':'; the first one is ours.
    assert.equal(loadStationConfig({}, { STATE_DIRECTORY: '/var/lib/a:/var/lib/b' }).dataDir, '/var/lib/a');
  });

  for (const bad of ['abc', '65536', '-1', '80.5', '12abc']) {
    test(`PORT=${bad} is a ConfigError naming PORT`, () => {
      assert.throws(
        () => loadStationConfig({}, { PORT: bad }),
        (error: unknown) =>
          error instanceof ConfigError && /PORT/.test(error.message) && error.message.includes(bad),
      );
    });
  }

  test('a bad --port is a ConfigError naming the flag', () => {
    assert.throws(
      () => loadStationConfig({ port: 'http' }, { PORT: '7000' }),
      (error: unknown) => error instanceof ConfigError && /--port/.test(error.message),
    );
    assert.throws(
      () => loadScoutConfig({ port: '99999' }, {}),
      (error: unknown) => error instanceof ConfigError && /--port/.test(error.message),
    );
  });

  for (const bad of ['0', '-5', 'lots', '1.5', '10GB']) {
    test(`MAX_UPLOAD_BYTES=${bad} is a ConfigError naming the variable`, () => {
      assert.throws(
        () => loadStationConfig({}, { MAX_UPLOAD_BYTES: bad }),
        (error: unknown) => error instanceof ConfigError && /MAX_UPLOAD_BYTES/.test(error.message),
      );
    });
  }

  for (const bad of ['mysql://db/backupd', 'sqlite:///tmp/x.db', 'localhost:5432', 'http://db:5432']) {
    test(`DATABASE_URL=${bad} is a ConfigError naming the variable`, () => {
      assert.throws(
        () => loadStationConfig({}, { DATABASE_URL: bad }),
        (error: unknown) => error instanceof ConfigError && /DATABASE_URL/.test(error.message),
      );
    });
  }

  test('postgres:// and postgresql:// database URLs are accepted', () => {
    assert.equal(loadStationConfig({}, { DATABASE_URL: 'postgres://h/db' }).databaseUrl, 'postgres://h/db');
    assert.equal(
      loadStationConfig({}, { DATABASE_URL: 'postgresql://h:5433/db' }).databaseUrl,
      'postgresql://h:5433/db',
    );
  });

  test('a ConfigError is an Error with its own name', () => {
    const error = new ConfigError('x');
    assert.ok(error instanceof Error);
    assert.equal(error.name, 'ConfigError');
  });
});

describe('scout config', () => {
  test('defaults', () => {
    const config = loadScoutConfig({}, {});
    assert.deepEqual(config, {
      role: 'scout',
      host: '0.0.0.0',
      port: 6556,
      dataDir: resolve('./data/scout'),
      initialAdminPassword: 'admin',
      allowedHosts: { listed: undefined, ownNames: [] },
      trustProxy: [],
      scanRoot: '/scan',
      env: {
        station_url: undefined,
        scout_id: undefined,
        scout_credential: undefined,
        cron_schedule: undefined,
      },
      advertisedUrl: undefined,
      adoptInstanceId: undefined,
    });
  });

  test('environment variables fill the settings overrides', () => {
    const config = loadScoutConfig(
      {},
      {
        SCAN_ROOT: '/data',
        STATION_URL: 'https://station.example',
        SCOUT_ID: 'web-1',
        SCOUT_CREDENTIAL: 'station-token',
        CRON_SCHEDULE: '*/5 * * * *',
        ADVERTISED_URL: 'http://web-1:6556',
        PORT: '7556',
      },
    );
    assert.equal(config.scanRoot, '/data');
    assert.equal(config.port, 7556);
    assert.deepEqual(config.env, {
      station_url: 'https://station.example',
      scout_id: 'web-1',
      scout_credential: 'station-token',
      cron_schedule: '*/5 * * * *',
    });
    assert.equal(config.advertisedUrl, 'http://web-1:6556');
  });

  test('STATE_DIRECTORY is the scout data dir when DATA_DIR is unset', () => {
    assert.equal(loadScoutConfig({}, { STATE_DIRECTORY: '/var/lib/scout' }).dataDir, '/var/lib/scout');
    assert.equal(
      loadScoutConfig({ dataDir: '/flag' }, { STATE_DIRECTORY: '/var/lib/scout' }).dataDir,
      '/flag',
    );
  });

  test('a bad PORT is a ConfigError for the scout too', () => {
    assert.throws(() => loadScoutConfig({}, { PORT: 'nope' }), ConfigError);
  });
});

describe('ALLOWED_HOSTS', () => {
  test('entries are host names or addresses with an optional port, lower-cased', () => {
    const config = loadStationConfig(
      {},
      { ALLOWED_HOSTS: ' Backup.Example.com , 192.168.1.10:6555,[::1]:6555, localhost.,' },
    );
    assert.deepEqual(config.allowedHosts.listed, [
      { host: 'backup.example.com', port: null },
      { host: '192.168.1.10', port: '6555' },
      { host: '[::1]', port: '6555' },
      { host: 'localhost', port: null },
    ]);
    assert.equal(loadScoutConfig({}, { ALLOWED_HOSTS: '  ' }).allowedHosts.listed, undefined);
    assert.equal(loadScoutConfig({}, { ALLOWED_HOSTS: ' , ' }).allowedHosts.listed, undefined);
  });

  test("unset, the Scout's ADVERTISED_URL host is one of its own names (the Station's hints use it)", () => {
    const scout = loadScoutConfig({}, { ADVERTISED_URL: 'http://Scout-7.Example.:6556/' });
    assert.deepEqual(scout.allowedHosts, { listed: undefined, ownNames: ['scout-7.example'] });
    assert.deepEqual(loadScoutConfig({}, { ADVERTISED_URL: 'not a url' }).allowedHosts.ownNames, []);
  });

  test('a URL or a path is a ConfigError naming the entry', () => {
    for (const bad of ['https://backup.example.com', 'backup.example.com/ui', 'host:port']) {
      assert.throws(
        () => loadScoutConfig({}, { ALLOWED_HOSTS: `ok.example,${bad}` }),
        (error: Error) => error instanceof ConfigError && error.message.includes(bad),
      );
    }
  });
});

describe('TRUST_PROXY', () => {
  test('off by default; takes addresses and CIDR ranges separated by commas or spaces', () => {
    assert.deepEqual(loadStationConfig({}, {}).trustProxy, []);
    assert.deepEqual(loadScoutConfig({}, { TRUST_PROXY: ' ' }).trustProxy, []);
    assert.deepEqual(
      loadStationConfig({}, { TRUST_PROXY: '127.0.0.1, 10.0.0.0/8 fd00::/8,::1' }).trustProxy,
      ['127.0.0.1', '10.0.0.0/8', 'fd00::/8', '::1'],
    );
  });

  test('anything else is a configuration error that names the entry', () => {
    for (const bad of ['proxy.example', '10.0.0.0/33', '::1/129', '10.0.0.1/8/1', '10.0.0.0/']) {
      assert.throws(
        () => loadStationConfig({}, { TRUST_PROXY: `127.0.0.1,${bad}` }),
        (error: Error) => error instanceof ConfigError && error.message.includes(bad),
        bad,
      );
    }
  });
});
