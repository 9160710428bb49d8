import type { Page } from '../shell.tsx';

/** The pages both apps share (accounts, automation tokens, notifications, hooks, certificates). */
export function commonPages(): Page[] {
  return [];
}
