/** `POST /backup/drills/{scout}/{instance}/{job}`: a restore drill's outcome (see drill-outcome.ts). */
export { type DrillOutcome, DrillOutcomeSchema } from '../drill-outcome.ts';
