import { useEffect, useState } from 'preact/hooks';

/** Client-side routes: the server answers every non-API path with the app. */
export function navigate(to: string): void {
  if (to === location.pathname + location.search) return;
  history.pushState(null, '', to);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function useLocationPath(): string {
  const [current, setCurrent] = useState(location.pathname);
  useEffect(() => {
    const onPop = () => setCurrent(location.pathname);
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);
  return current;
}

/** An in-app link: a real `<a href>` (open in new tab works) that navigates without reload. */
export function linkClick(event: MouseEvent, to: string): void {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(to);
}
