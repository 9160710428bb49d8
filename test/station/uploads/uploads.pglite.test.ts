// The uploads suites (upload-suites.ts) on each Station with its embedded PGlite.
import { uploadSuites } from './upload-suites.ts';

uploadSuites('pglite');
