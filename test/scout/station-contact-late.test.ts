// The Scout's record of its last contact with the Station (src/scout/services/station-contact.ts)
// after the Station address changed: a late answer from the old address (a check still waiting
// on an address that never answers, up to the 60 s request timeout) does not overwrite what the
// new address said.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stationContact } from '../../src/scout/services/station-contact.ts';
import { StationError } from '../../src/scout/upload/station-client.ts';

const unreachable = (base: string) =>
  new StationError(0, null, null, `cannot reach the Station at ${base}: ECONNREFUSED`);

test('after the address changed, outcomes from the old address are ignored', () => {
  stationContact.reset('http://new.example:6555/');
  stationContact.record(null, 'http://new.example:6555');
  assert.equal(stationContact.view().reachable, true);
  stationContact.record(unreachable('http://old.example:6555'), 'http://old.example:6555');
  assert.equal(stationContact.view().reachable, true, 'the old address answers late: ignored');
  stationContact.record(unreachable('http://new.example:6555'), 'http://new.example:6555');
  assert.equal(stationContact.view().reachable, false, 'the new address counts');
  stationContact.reset();
  stationContact.record(null, 'http://anything.example');
  assert.equal(stationContact.view().reachable, true, 'without an address set, every outcome counts');
});
