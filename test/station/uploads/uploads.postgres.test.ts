// The uploads suites (upload-suites.ts) on one throwaway PostgreSQL server, each suite its own database.
import { uploadSuites } from './upload-suites.ts';

uploadSuites('postgres');
