/**
 * The service URI of a request target under a mount path (`/api`): the rest after the
 * base, or undefined when the target is outside it (`/apiary` is not under `/api`).
 */
export function stripBasePath(url: string, basePath: string): string | undefined {
  const base = normalizeBasePath(basePath);
  if (base === '') return url;
  // Written as mounted (the usual case): no lower-cased copies of the URL a request.
  if (!(url.startsWith(base) && ascii(base)) && !url.toLowerCase().startsWith(base.toLowerCase())) return undefined;
  const rest = url.slice(base.length);
  if (rest === '' || rest[0] === '?') return `/${rest}`;
  return rest[0] === '/' ? rest : undefined;
}

/** `/api/` and `/api` are the same mount path; `/` is none. */
export function normalizeBasePath(basePath: string | undefined): string {
  if (!basePath || basePath === '/') return '';
  return basePath.endsWith('/') ? basePath.slice(0, -1) : basePath;
}

/** ASCII only: lower-casing such a prefix of a URL changes neither its length nor depends on what follows. */
function ascii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}
