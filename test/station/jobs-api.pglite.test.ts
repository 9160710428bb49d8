// GET /api/jobs on a Station with PGlite.
import { startServer } from '../helpers/server.ts';
import { jobsApiSuite } from './jobs-api-suite.ts';

jobsApiSuite('jobs API (PGlite)', () => startServer('station'));
