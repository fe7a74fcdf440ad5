/**
 * The service URI of a request target under a mount path (`/api`): the rest after the
 * base, or undefined when the target is outside it (`/apiary` is not under `/api`).
 */
export function stripBasePath(url: string, basePath: string): string | undefined {
  const base = normalizeBasePath(basePath);
  if (base === '') return url;
  if (!url.toLowerCase().startsWith(base.toLowerCase())) return undefined;
  const rest = url.slice(base.length);
  if (rest === '' || rest[0] === '?') return `/${rest}`;
  return rest[0] === '/' ? rest : undefined;
}

/** `/api/` and `/api` are the same mount path; `/` is none. */
export function normalizeBasePath(basePath: string | undefined): string {
  if (!basePath || basePath === '/') return '';
  return basePath.endsWith('/') ? basePath.slice(0, -1) : basePath;
}
