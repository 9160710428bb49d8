// The tokens suites (token-suites.ts) on one throwaway PostgreSQL server, each suite its own database.
import { tokenSuites } from './token-suites.ts';

tokenSuites('postgres');
