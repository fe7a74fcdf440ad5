// A Next.js App Router route handler module, as it would live at app/api/[...path]/route.ts
// (docs/adapters/fetch.md): one handler for every method Next.js routes, the service under
// /api, the signed-in user handed over as context. Next.js itself is not run here: its
// route handlers are functions from a Web Request to a Response, so the test calls them so.
import { createService, MemoryStorage } from '@resourcery/core';

export const service = createService({
  authenticate: (_request, context: { user?: string } | undefined) => ({ user: context?.user ?? 'guest' }),
});
service.addResource({
  name: 'Garden.Plant',
  storage: new MemoryStorage([
    { Name: 'Fern', Height: 40 },
    { Name: 'Moss', Height: 2 },
  ]),
  // Guests read; only a signed-in user writes.
  rules: { allow: (caller, method) => method === 'GET' || (caller.principal as { user: string }).user !== 'guest' },
});

/** Stands in for the app's session lookup (next-auth's auth(), a cookie): here a header. */
async function session(request: Request): Promise<{ user?: string }> {
  return { user: request.headers.get('x-user') ?? undefined };
}

/** Next.js calls it with the dynamic segments too; the service reads the path from the URL itself. */
async function handler(request: Request, _segments: { params: Promise<{ path: string[] }> }): Promise<Response> {
  return service.fetch(request, { basePath: '/api', context: await session(request) });
}

export { handler as GET, handler as HEAD, handler as POST, handler as PUT, handler as PATCH, handler as DELETE, handler as OPTIONS };
