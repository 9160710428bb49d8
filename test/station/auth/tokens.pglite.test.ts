// The tokens suites (token-suites.ts) on each Station with its embedded PGlite.
import { tokenSuites } from './token-suites.ts';

tokenSuites('pglite');
