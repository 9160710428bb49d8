import type { BlockList } from 'node:net';
import type { Auth } from '../auth/types.ts';
import type { Core } from '../core.ts';
import type { Logger } from '../log.ts';

/** The per-request values every handler may read. */
export interface AppEnv {
  Variables: {
    core: Core;
    auth: Auth | null;
    requestId: string;
    log: Logger;
    /** `TRUST_PROXY`: peers whose `X-Forwarded-For` names the client (none when undefined). */
    trustedProxies: BlockList | undefined;
  };
}
