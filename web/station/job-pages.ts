/**
 * The dashboard's jobs, a page at a time from GET /api/jobs: the first page at once, more on
 * request, every loaded page again each `refreshMs` (paused like every refresh: hidden tab or
 * open dialog). A change of filters starts again from the first page; an answer to older
 * filters is dropped.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import {
  JOBS_PAGE_DEFAULT,
  JOBS_PAGE_MAX,
  type JobHealth,
  type JobSummary,
  type JobsPage,
} from '../../src/shared/protocol/jobs.ts';
import { api, errorText } from '../common/api.ts';
import { useRefresh } from '../common/poll.ts';

export interface JobFilters {
  /** Text in the host, instance or job name. */
  q: string;
  health: JobHealth | '';
}

export interface JobPages {
  jobs: JobSummary[];
  /** The last answer (counts, rules, total); null before the first. */
  last: Omit<JobsPage, 'jobs'> | null;
  /** The filters `jobs` were loaded with. */
  loadedFor: JobFilters | null;
  error: string | null;
  loading: boolean;
  loadedAt: number | null;
  more: () => Promise<void>;
  reload: () => Promise<void>;
}

function url(filters: JobFilters, limit: number, cursor: string | null): string {
  return stationPaths.jobs({
    limit,
    q: filters.q.trim() || undefined,
    health: filters.health || undefined,
    cursor: cursor ?? undefined,
  });
}

export function useJobPages(filters: JobFilters, refreshMs: number): JobPages {
  const [state, setState] = useState<Omit<JobPages, 'more' | 'reload' | 'loading'>>({
    jobs: [],
    last: null,
    loadedFor: null,
    error: null,
    loadedAt: null,
  });
  const [loading, setLoading] = useState(true);
  const filtersRef = useRef(filters);
  filtersRef.current = filters;
  const stateRef = useRef(state);
  stateRef.current = state;
  const key = JSON.stringify(filters);
  const keyRef = useRef(key);
  keyRef.current = key;

  /** Loads the first `count` jobs again (at least one page), page by page. */
  const load = useCallback(async (count: number) => {
    const asked = keyRef.current;
    const current = filtersRef.current;
    setLoading(true);
    try {
      const jobs: JobSummary[] = [];
      let cursor: string | null = null;
      let page: JobsPage;
      do {
        page = await api.get<JobsPage>(
          url(current, Math.min(JOBS_PAGE_MAX, Math.max(1, count - jobs.length)), cursor),
        );
        jobs.push(...page.jobs);
        cursor = page.next_cursor;
      } while (cursor && jobs.length < count);
      if (asked !== keyRef.current) return;
      const { jobs: _shown, ...last } = page;
      setState({
        jobs,
        last: { ...last, next_cursor: cursor },
        loadedFor: current,
        error: null,
        loadedAt: Date.now(),
      });
    } catch (error) {
      if (asked === keyRef.current) setState((prev) => ({ ...prev, error: errorText(error) }));
    } finally {
      if (asked === keyRef.current) setLoading(false);
    }
  }, []);

  const reload = useCallback(() => load(Math.max(JOBS_PAGE_DEFAULT, stateRef.current.jobs.length)), [load]);

  const more = useCallback(async () => {
    const { last, jobs } = stateRef.current;
    if (!last?.next_cursor) return;
    const asked = keyRef.current;
    setLoading(true);
    try {
      const page = await api.get<JobsPage>(url(filtersRef.current, JOBS_PAGE_DEFAULT, last.next_cursor));
      if (asked !== keyRef.current) return;
      const { jobs: added, ...rest } = page;
      setState((prev) => ({ ...prev, jobs: [...jobs, ...added], last: rest, error: null }));
    } catch (error) {
      if (asked === keyRef.current) setState((prev) => ({ ...prev, error: errorText(error) }));
    } finally {
      if (asked === keyRef.current) setLoading(false);
    }
  }, []);

  // New filters: the first page again.
  useEffect(() => {
    void load(JOBS_PAGE_DEFAULT);
  }, [key, load]);

  useRefresh(reload, refreshMs);

  return { ...state, loading, more, reload };
}
