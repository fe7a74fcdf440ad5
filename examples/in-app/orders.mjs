// The resource both in-app examples serve: orders that belong to users.
// Each caller sees and changes only their own orders; admins see all; only admins delete.
import { createService, MemoryStorage, ServiceError } from '@resourcery/core';

/**
 * @param {(request: import('@resourcery/core').CallerRequest, context: any) => unknown} authenticate
 *   turns the app's context (its session, req.user, ctx.state) into a principal.
 */
export function ordersService(authenticate) {
  const service = createService({
    authenticate,
    // Unexpected errors (500): the client gets a generic message, the log gets the details.
    onError: (error, info) => console.error(`[orders] ${info.method} ${info.uri}: ${error.message}`),
  });
  service.addResource({
    name: 'Shop.Order',
    schema: {
      type: 'object',
      properties: { Id: { type: 'integer' }, Owner: { type: 'string' }, Item: { type: 'string' }, Qty: { type: 'integer', minimum: 1 } },
      required: ['Id', 'Item', 'Qty'],
    },
    storage: new MemoryStorage([
      { Id: 1, Owner: 'ann', Item: 'tea', Qty: 2 },
      { Id: 2, Owner: 'bob', Item: 'cake', Qty: 1 },
    ]),
    rules: {
      allow: (caller, method) => method !== 'DELETE' || caller.principal.role === 'admin',
      // Conditions in the URI syntax: storage gets them with the request's own (SQL pushes them down).
      rows: (caller) => (caller.principal.role === 'admin' ? undefined : `Owner=${encodeURIComponent(caller.principal.user)}`),
    },
    hooks: {
      // The owner is whoever creates the order, whatever the body says.
      beforeInsert: (order, caller) => ({ ...order, Owner: caller.principal.user }),
      beforeUpdate: (order, existing) => {
        if (order.Owner !== existing.Owner) throw new ServiceError('Forbidden', 'An order keeps its owner');
      },
    },
  });
  return service;
}

/** The app's own session lookup, standing in for cookies or a session store. */
export function sessionUser(token) {
  return {
    'ann-session': { user: 'ann', role: 'customer' },
    'bob-session': { user: 'bob', role: 'customer' },
    'root-session': { user: 'root', role: 'admin' },
  }[token];
}

/** authenticate for both apps: the user the app's middleware found, or 401. */
export function fromContext(_request, context) {
  if (!context?.user) throw new ServiceError('NotAuthorized', 'Log in first');
  return context.user;
}
