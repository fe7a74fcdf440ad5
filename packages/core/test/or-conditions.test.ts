import fc from 'fast-check';
import { createService, MemoryStorage, type Entity } from '@resourcery/core';
import { evaluate, parseUri, type AnyOf, type Condition } from '@resourcery/core/storage';
import { setCodeGeneration } from '@resourcery/core/internal';
import { call, RAW } from './handle-support';
import { compile, ids } from './query-support';

// `|` inside a condition item: alternatives, any of which may hold (docs/uri.md).

const TASKS: Entity[] = [
  { Id: 1, Status: 'open', Owner: 'ann', Points: 3 },
  { Id: 2, Status: 'pending', Owner: 'bo', Points: 5 },
  { Id: 3, Status: 'done', Owner: 'ann', Points: 8 },
  { Id: 4, Status: 'pending', Owner: 'ann', Points: 1 },
  { Id: 5, Status: 'open|pending', Owner: 'cy', Points: 2 },
  { Id: 6, Owner: 'ann' },
];

describe('grammar: split on &, then on |, then at the operator', () => {
  test('alternatives with their own locators, and ones that repeat the previous locator and operator', () => {
    const [item, owner] = parseUri('/Task/Status=open|Owner<b|pending&Owner=ann').conditions as [AnyOf, Condition];
    expect(item.anyOf.map((c) => [c.locator.text, c.op, c.value])).toEqual([
      ['Status', '=', { kind: 'raw', text: 'open' }],
      ['Owner', '<', { kind: 'raw', text: 'b' }],
      ['Owner', '<', { kind: 'raw', text: 'pending' }],
    ]);
    expect(item.text).toBe('Status=open|Owner<b|pending');
    expect(owner.locator.text).toBe('Owner');
  });

  test('%7C is a literal | in a value; an item without | stays a plain condition', () => {
    const [c] = parseUri('/Task/Status=open%7Cpending').conditions as [Condition];
    expect(c.value).toEqual({ kind: 'raw', text: 'open|pending' });
    expect(ids(TASKS, 'Status=open%7Cpending')).toEqual([5]);
  });

  test('a first alternative without an operator is a 400 naming the item, never a key lookup', () => {
    const parsed = parseUri('/Task/1|2');
    expect(parsed.bare).toBeUndefined();
    expect(parsed.error?.code).toBe('InvalidConditionOperator');
  });

  test('an alternative with an operator but no locator repeats the previous locator: Points>6|<2', () => {
    const [item] = parseUri('/Task/Points>6|<2').conditions as [AnyOf];
    expect(item.anyOf.map((c) => c.text)).toEqual(['Points>6', 'Points<2']);
    expect(parseUri('/Task/|Id=1').error?.code).toBe('InvalidConditionOperator');
  });
});

describe('evaluation', () => {
  test('(open or pending) and ann; IN lists of numbers and strings; null among the alternatives', () => {
    expect(ids(TASKS, 'Status=open|Status=pending&Owner=ann')).toEqual([1, 4]);
    expect(ids(TASKS, 'Status=open|pending')).toEqual([1, 2, 4]);
    expect(ids(TASKS, 'Id=1|3|5|99')).toEqual([1, 3, 5]);
    expect(ids(TASKS, "Owner='bo'|'cy'")).toEqual([2, 5]);
    expect(ids(TASKS, 'Status=null|done')).toEqual([3, 6]);
    expect(ids(TASKS, 'Points>6|<2')).toEqual([3, 4]);
    expect(ids(TASKS, 'Points>6|Owner=bo', 'order_desc=Id')).toEqual([3, 2]);
  });

  test('an item with alternatives matches what any one of them matches alone (random items, both plans)', () => {
    const locators = ['Id', 'Status', 'Owner', 'Points', 'owner', 'Missing'];
    const values = ['1', '2', '3', '5', 'open', 'pending', "'ann'", 'ann', 'null', '', 'true'];
    const alternative = fc
      .tuple(fc.constantFrom(...locators), fc.constantFrom('=', '!=', '<', '>=', ''), fc.constantFrom(...values))
      .map(([l, o, v]) => (o === '' ? v : `${l}${o}${v}`));
    const item = fc
      .tuple(
        fc.tuple(fc.constantFrom(...locators), fc.constantFrom('=', '!=', '<', '>='), fc.constantFrom(...values)),
        fc.array(alternative, { minLength: 1, maxLength: 4 }),
      )
      .map(([[l, o, v], rest]) => [`${l}${o}${v}`, ...rest]);
    fc.assert(
      fc.property(item, fc.constantFrom('_', 'order_desc=Points', 'order_asc=Owner'), fc.boolean(), (alternatives, order, paged) => {
        const text = alternatives.join('|');
        const parsed = parseUri(`/Task/${text}`).conditions[0] as AnyOf;
        // Each alternative alone, written out in full (the repeated locator and operator filled in).
        const alone = parsed.anyOf.map(
          (c) =>
            new Set(
              ids(
                TASKS,
                c.text.replace(/^(\w+)([!<>=]+)(.*)$/, (_, l, o, v) => `${l}${o}${encodeURIComponent(v)}`),
              ),
            ),
        );
        const all = ids(TASKS, '_', order).filter((id) => alone.some((s) => s.has(id)));
        const expected = paged ? all.slice(1, 3) : all;
        const meta = paged ? `${order === '_' ? '' : `${order}&`}offset=1&limit=2` : order;
        for (const generation of [false, true]) {
          setCodeGeneration(generation);
          // The generated scan takes over after a few runs of one query.
          const q = compile(text, meta);
          for (let i = 0; i < 4; i++) expect(evaluate(TASKS, q).map((e) => e.Id)).toEqual(expected);
        }
        setCodeGeneration(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('through the service: requests, views, row rules, event selectors, macros', () => {
  function service() {
    const s = createService();
    s.addResource({
      name: 'Task',
      storage: new MemoryStorage(structuredClone(TASKS)),
      key: 'Id',
      views: [{ name: 'Active', conditions: 'Status=open|pending' }],
    });
    return s;
  }

  test('GET, DELETE and a view with alternatives', async () => {
    const s = service();
    expect((await call(s, 'GET', '/Task/Id=2|4|6', { headers: RAW })).json.map((e: Entity) => e.Id)).toEqual([2, 4, 6]);
    expect((await call(s, 'GET', '/Task-Active/Owner=ann', { headers: RAW })).json.map((e: Entity) => e.Id)).toEqual([1, 4]);
    expect((await call(s, 'DELETE', '/Task/Id=1|2/unsafe=true')).status).toBe(200);
    expect((await call(s, 'GET', '/Task/_/select=Id', { headers: RAW })).json.map((e: Entity) => e.Id)).toEqual([3, 4, 5, 6]);
  });

  test('a row rule with alternatives limits what the caller reads', async () => {
    const s = createService();
    s.addResource({
      name: 'Task',
      storage: new MemoryStorage(structuredClone(TASKS)),
      rules: { rows: () => 'Owner=bo|cy' },
    });
    const reply = await call(s, 'GET', '/Task/Id=1|2|5', { headers: RAW });
    expect(reply.status).toBe(200);
    expect(reply.json.map((e: Entity) => e.Id)).toEqual([2, 5]);
  });

  test("a macro with alternatives; the caller's conditions are ANDed after them", async () => {
    const s = service();
    const saved = await call(s, 'POST', '/Service.Admin.Macro', { body: { Name: 'active', Uri: '/Task/Status=open|pending' } });
    expect(saved.status).toBe(201);
    expect((await call(s, 'GET', '/$active/Owner=ann|bo', { headers: RAW })).json.map((e: Entity) => e.Id)).toEqual([1, 2, 4]);
  });
});
