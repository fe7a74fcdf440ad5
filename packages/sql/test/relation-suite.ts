import { createService, MemoryStorage, type Entity, type Service, type Storage } from '@resourcery/core';
import { createSqlStorage, type SqlClient } from '@resourcery/sql';
import { call, comparable } from './support';

/**
 * Relations in SQL (docs/relations.md): embed reads each related table once per response,
 * whatever the page size (no N+1), and answers as MemoryStorage does; conditions through a
 * relation too. Run on PGlite and PostgreSQL.
 */
export function relationSuite(database: () => SqlClient, freshTable: () => string): void {
  describe('relations: embed and conditions through them', () => {
    const customers: Entity[] = Array.from({ length: 120 }, (_, i) => ({
      Id: i + 1,
      Name: `c${i + 1}`,
      City: ['Oslo', 'Rome', 'Pune'][i % 3],
    }));
    // Customer 1..100 have orders (some several, in no key order); 101..120 none; a few orders have no customer.
    const orders: Entity[] = Array.from({ length: 300 }, (_, i) => ({
      Id: 1000 - i,
      CustomerId: i < 290 ? ((i * 7) % 100) + 1 : null,
      Total: (i * 37) % 500,
    }));

    const service = (customerStorage: Storage, orderStorage: Storage): Service => {
      const s = createService();
      s.addResource({
        name: 'Customer',
        key: 'Id',
        storage: customerStorage,
        relations: { Orders: { toMany: 'Order', via: 'CustomerId' } },
      });
      s.addResource({
        name: 'Order',
        key: 'Id',
        storage: orderStorage,
        indexes: ['CustomerId'],
        relations: { Customer: { toOne: 'Customer', via: 'CustomerId' } },
      });
      return s;
    };

    test('one SELECT per table per response for a page of 100, the same answers as memory', async () => {
      const statements: string[] = [];
      const client: SqlClient = {
        query: (text, params) => {
          if (/^\s*SELECT /i.test(text) && !/information_schema|pg_catalog|pg_class/i.test(text)) statements.push(text);
          return database().query(text, params);
        },
      };
      const customerSql = createSqlStorage({ client, table: freshTable() });
      const orderSql = createSqlStorage({ client, table: freshTable() });
      await customerSql.write({ insert: structuredClone(customers) });
      await orderSql.write({ insert: structuredClone(orders) });
      const sql = service(customerSql, orderSql);
      const memory = service(new MemoryStorage(structuredClone(customers)), new MemoryStorage(structuredClone(orders)));
      // Warm up: table checks and index creation are not the requests' selects.
      await call(sql, 'GET', '/Customer/_/limit=1&embed=Orders');
      await call(sql, 'GET', '/Order/_/limit=1&embed=Customer');
      for (const [uri, selects] of [
        ['/Customer/_/order_asc=Id&limit=100&embed=Orders', 2],
        ['/Order/_/order_asc=Id&limit=100&embed=Customer', 2],
        ['/Customer/City=Oslo/embed=Orders&select=Id,Orders.Length&add=Orders.Length&limit=100', 2],
        ['/Order/_/embed=Customer&select=Id,Customer.Name&order_asc=Customer.Name,Id&limit=100', 2],
        ['/Customer/_/embed=Orders&add=Orders.Length&order_desc=Orders.Length,Id&limit=5&select=Id', 2],
        ['/Order/Customer.City=Rome&Total>300/order_asc=Id', 2],
        ['/Customer/Orders.Total>=490/order_asc=Id&select=Id', 2],
        ['/Customer/Orders.Total>=490|City=Pune/order_asc=Id&select=Id&embed=Orders', 3],
      ] as const) {
        statements.length = 0;
        const [m, s] = [await call(memory, 'GET', uri), await call(sql, 'GET', uri)];
        expect({ uri, ...(comparable(s) as object) }).toEqual({ uri, ...(comparable(m) as object) });
        expect({ uri, selects: statements.length }).toEqual({ uri, selects });
      }
    });

    test('onDelete: a cascade deletes the related rows in their table, a restrict is 409 with nothing deleted', async () => {
      const build = async (onDelete: 'cascade' | 'restrict') => {
        const customerSql = createSqlStorage({ client: database(), table: freshTable() });
        const orderSql = createSqlStorage({ client: database(), table: freshTable() });
        await customerSql.write({ insert: structuredClone(customers) });
        await orderSql.write({ insert: structuredClone(orders) });
        const s = createService();
        s.addResource({
          name: 'Customer',
          key: 'Id',
          storage: customerSql,
          relations: { Orders: { toMany: 'Order', via: 'CustomerId', onDelete } },
        });
        s.addResource({ name: 'Order', key: 'Id', storage: orderSql, indexes: ['CustomerId'] });
        return s;
      };
      const count = async (s: Service, uri: string) => ((await call(s, 'GET', uri)).json as Entity[] | undefined)?.length ?? 0;
      const cascading = await build('cascade');
      const related = await count(cascading, '/Order/CustomerId<=10');
      expect(related).toBeGreaterThan(0);
      expect((await call(cascading, 'DELETE', '/Customer/Id<=10/unsafe=true')).status).toBe(200);
      expect(await count(cascading, '/Customer/Id<=10')).toBe(0);
      expect(await count(cascading, '/Order/CustomerId<=10')).toBe(0);
      expect(await count(cascading, '/Order')).toBe(orders.length - related);

      const restricting = await build('restrict');
      const refused = await call(restricting, 'DELETE', '/Customer/1');
      expect(refused.status).toBe(409);
      expect((refused.json as { Message: string }).Message).toMatch(/relation 'Orders'/);
      expect(await count(restricting, '/Customer/1')).toBe(1);
      expect((await call(restricting, 'DELETE', '/Customer/120')).status).toBe(200);
      expect(await count(restricting, '/Customer/120')).toBe(0);
    });
  });
}
