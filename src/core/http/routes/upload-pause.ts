import { Hono } from 'hono';
import type { UploadPauseReply } from '../../../shared/protocol/settings.ts';
import type { UploadAcceptance } from '../../settings/upload-acceptance.ts';
import { adminOnly } from '../access.ts';
import type { AppEnv } from '../app-env.ts';

/** `POST …/pause` and `…/resume` of uploads (the `backup` scope), mounted where each role wants them. */
export function uploadPauseRoutes(acceptance: UploadAcceptance) {
  const app = new Hono<AppEnv>();
  app.post('/pause', adminOnly('backup'), async (c) => {
    await acceptance.setPaused(true);
    return c.json({ status: 'paused', uploads_paused: true } satisfies UploadPauseReply);
  });
  app.post('/resume', adminOnly('backup'), async (c) => {
    await acceptance.setPaused(false);
    return c.json({ status: 'resumed', uploads_paused: false } satisfies UploadPauseReply);
  });
  return app;
}
