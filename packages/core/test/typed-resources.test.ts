import { z } from 'zod';
import { createService, jsonSchema, type Caller, type EntityOf } from '@resourcery/core';
import { call, RAW } from './handle-support';

/**
 * Typed resources (DESIGN 13): the entity type comes from the schema or is given, and
 * types hooks, rules and toOutput. The `@ts-expect-error` lines are checked by
 * `pnpm run typecheck` (tsc over the tests): each must be a type error, or tsc fails.
 */

const service = createService();
afterAll(() => service.close());

interface Order {
  Id: number;
  Owner: string;
  Qty: number;
  Secret?: string;
}

describe('a JSON Schema made with jsonSchema() types the entities', () => {
  const schema = jsonSchema({
    type: 'object',
    properties: {
      Id: { type: 'integer' },
      Name: { type: 'string' },
      Tags: { type: 'array', items: { type: 'string' } },
      Status: { enum: ['open', 'closed'] },
      Note: { type: ['string', 'null'] },
    },
    required: ['Id', 'Name'],
    additionalProperties: false,
  });
  type Ticket = EntityOf<{
    type: 'object';
    properties: { Id: { type: 'integer' }; Name: { type: 'string' }; Note: { type: ['string', 'null'] } };
    required: ['Id', 'Name'];
    additionalProperties: false;
  }>;

  test('EntityOf: required properties, optional ones, nullable types', () => {
    const ok: Ticket[] = [
      { Id: 1, Name: 'a' },
      { Id: 2, Name: 'b', Note: null },
    ];
    // @ts-expect-error Id is required
    const missing: Ticket = { Name: 'a' };
    // @ts-expect-error Note is a string or null
    const wrong: Ticket = { Id: 1, Name: 'a', Note: 3 };
    expect([ok, missing, wrong]).toHaveLength(3);
  });

  test('hooks see the inferred type; wrong property types do not compile', async () => {
    const seen: string[] = [];
    service.addResource({
      name: 'Ticket',
      schema,
      hooks: {
        beforeInsert: (ticket) => {
          const id: number = ticket.Id;
          const name: string = ticket.Name;
          const tags: string[] | undefined = ticket.Tags;
          const status: 'open' | 'closed' | undefined = ticket.Status;
          const note: string | null | undefined = ticket.Note;
          seen.push(`${id} ${name} ${tags} ${status} ${note}`);
          // @ts-expect-error Name is a string
          const wrong: number = ticket.Name;
          // @ts-expect-error no such property (additionalProperties: false)
          void ticket.Nmae;
          void wrong;
          return ticket;
        },
        afterInsert: (tickets) => {
          // @ts-expect-error Status is 'open' | 'closed'
          tickets[0].Status = 'pending';
        },
      },
      rules: {
        rows: () => (ticket) => {
          // @ts-expect-error the predicate gets a Ticket: Id is a number
          const id: string = ticket.Id;
          return id !== '';
        },
      },
    });
    service.addResource({
      name: 'Ticket2',
      schema,
      hooks: {
        // @ts-expect-error a hook may not return a Ticket whose Id is a string
        beforeInsert: (ticket) => ({ ...ticket, Id: 'one' }),
      },
    });
    expect(seen).toEqual([]);
  });

  test('the same schema still validates at run time', async () => {
    const s = createService();
    s.addResource({ name: 'Ticket', schema });
    const res = await call(s, 'POST', '/Ticket', { body: { Id: 1, Name: 7 }, headers: RAW });
    expect([res.status, res.json.ErrorCode, res.json.Data]).toEqual([400, 'InvalidResourceEntity', { Name: 'must be string' }]);
    await s.close();
  });
});

describe('a type given explicitly types hooks, rules and toOutput', () => {
  test('addResource<Order>: rules and hooks see Order; toOutput decides what clients see', () => {
    service.addResource<Order, Omit<Order, 'Secret'>>({
      name: 'Order',
      toOutput: ({ Secret: _secret, ...visible }) => visible,
      rules: {
        rows: (caller: Caller<unknown, string>) => (order) => order.Owner === caller.principal,
      },
      hooks: {
        afterRead: (orders) => {
          // @ts-expect-error the output has no Secret
          void orders[0].Secret;
          return orders;
        },
        beforeUpdate: (order, existing) => {
          // @ts-expect-error Qty is a number
          order.Qty = existing.Owner;
          return order;
        },
      },
    });
    // @ts-expect-error toOutput must return the declared output type
    service.addResource<Order, { Id: string }>({ name: 'Order2', toOutput: (o) => ({ Id: o.Id }) });
    expect(true).toBe(true);
  });
});

describe('a Standard Schema validator (zod) types and validates the entities', () => {
  const Person = z.object({ Name: z.string().min(1), Age: z.number().int().default(0) });

  test('its output type types the hooks', () => {
    service.addResource({
      name: 'ZodPerson',
      schema: Person,
      hooks: {
        beforeInsert: (person) => {
          const age: number = person.Age;
          // @ts-expect-error Name is a string
          const n: number = person.Name;
          void n;
          return { ...person, Age: age + 1 };
        },
      },
    });
    expect(true).toBe(true);
  });

  test('it validates bodies (issues per property) and its output (defaults, no unknown keys) is what is stored', async () => {
    const s = createService();
    s.addResource({ name: 'Person', schema: Person });
    const bad = await call(s, 'POST', '/Person', { body: { Name: '', Age: 1.5 }, headers: RAW });
    expect([bad.status, bad.json.ErrorCode, Object.keys(bad.json.Data).sort()]).toEqual([400, 'InvalidResourceEntity', ['Age', 'Name']]);
    expect((await call(s, 'POST', '/Person', { body: { Name: 'Ann', Extra: true } })).status).toBe(201);
    expect((await call(s, 'GET', '/Person', { headers: RAW })).json).toEqual([{ Name: 'Ann', Age: 0 }]);
    await s.close();
  });

  test('its JSON Schema (Standard JSON Schema) types condition values', async () => {
    const s = createService();
    s.addResource({ name: 'Person', schema: Person });
    await call(s, 'POST', '/Person', { body: [{ Name: 'Ann', Age: 30 }] });
    expect((await call(s, 'GET', '/Person/Age=abc', { headers: RAW })).status).toBe(400);
    expect((await call(s, 'GET', '/Person/Nmae=Ann', { headers: RAW })).json.ErrorCode).toBe('UnknownProperty');
    await s.close();
  });
});
