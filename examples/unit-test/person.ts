import { createService, ServiceError, type Service } from '@resourcery/core';

/**
 * The application's Person resource: a schema that types conditions and validates
 * bodies, a view, and hooks that normalise input and hide a secret on output.
 */
export function createPeopleService(): Service {
  const service = createService();
  service.addResource({
    name: 'Person',
    schema: {
      type: 'object',
      properties: {
        Id: { type: 'integer' },
        Name: { type: 'string', minLength: 1 },
        Email: { type: ['string', 'null'] },
        Born: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' }, // ISO date
        PinHash: { type: 'string' },
      },
      required: ['Id', 'Name'],
      additionalProperties: false,
    },
    views: [{ name: 'Reachable', description: 'People with an email address', conditions: 'Email!=null', meta: 'order_asc=Name' }],
    hooks: {
      beforeWrite(person, change) {
        if (change.operation === 'update' && person.Id !== change.existing?.Id) {
          throw new ServiceError('InvalidResourceEntity', 'Id cannot change', { data: { Id: 'is read-only' } });
        }
        return typeof person.Email === 'string' ? { ...person, Email: person.Email.trim().toLowerCase() } : person;
      },
    },
    toOutput: ({ PinHash: _hidden, ...person }) => person,
  });
  return service;
}
