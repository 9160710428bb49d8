import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { errorText } from './api.ts';

/** Refreshes are paused while the tab is hidden or a dialog is open. */
export function refreshPaused(): boolean {
  return document.hidden || document.querySelector('dialog[open]') !== null;
}

export interface Polled<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  /** When the last successful load finished. */
  loadedAt: number | null;
  reload: () => Promise<void>;
}

/**
 * Loads `load()` now and again every `intervalMs` (which may change between renders, e.g.
 * faster while an operation runs), skipping ticks while refreshes are paused and catching
 * up as soon as the tab is visible again.
 */
export function usePoll<T>(load: () => Promise<T>, intervalMs: number | null): Polled<T> {
  const [state, setState] = useState<{ data: T | null; error: string | null; loadedAt: number | null }>({
    data: null,
    error: null,
    loadedAt: null,
  });
  const [loading, setLoading] = useState(true);
  const loadRef = useRef(load);
  loadRef.current = load;
  const reload = useCallback(async () => {
    setLoading(true);
    try {
      const data = await loadRef.current();
      setState({ data, error: null, loadedAt: Date.now() });
    } catch (error) {
      setState((prev) => ({ ...prev, error: errorText(error) }));
    } finally {
      setLoading(false);
    }
  }, []);

  useEffect(() => {
    void reload();
  }, [reload]);

  useRefresh(reload, intervalMs);

  return { ...state, loading, reload };
}

/**
 * Calls `reload` every `intervalMs` (null: never) unless refreshes are paused, and at once when
 * the tab becomes visible again.
 */
export function useRefresh(reload: () => Promise<void>, intervalMs: number | null): void {
  useEffect(() => {
    if (intervalMs === null) return;
    const timer = setInterval(() => {
      if (!refreshPaused()) void reload();
    }, intervalMs);
    const onVisible = () => {
      if (!document.hidden) void reload();
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [intervalMs, reload]);
}
