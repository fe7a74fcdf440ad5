import { createService, type Service } from '@resourcery/core';
import { storageContract } from '../../packages/core/test/storage-contract';
import { MapStorage } from './map-storage';

// The documented example passes the same contract suite as the project's own storages.
storageContract('MapStorage (docs/storage.md)', () => new MapStorage('Id'));

const HEADERS = { accept: 'application/json;raw=true', 'content-type': 'application/json' };
let service: Service;

async function call(method: string, uri: string, body?: unknown) {
  const res = await service.handle({ method, uri, headers: HEADERS, body: body === undefined ? null : JSON.stringify(body) });
  return { status: res.status, json: typeof res.body === 'string' && res.body ? JSON.parse(res.body) : null };
}

beforeEach(() => {
  service = createService();
  service.addResource({
    name: 'Product',
    key: 'Sku',
    storage: new MapStorage('Sku', [
      { Sku: 'A-1', Name: 'Anvil', Price: 120 },
      { Sku: 'B-2', Name: 'Bucket', Price: 8 },
      { Sku: 'C-3', Name: 'Chisel', Price: 15 },
    ]),
  });
});

describe('a storage that declines push-down still answers the whole query language', () => {
  test('the service applies conditions, order, offset and limit itself', async () => {
    expect((await call('GET', '/Product/Price>10/order_desc=Price&offset=1&limit=1')).json).toEqual([
      { Sku: 'C-3', Name: 'Chisel', Price: 15 },
    ]);
    expect((await call('REPORT', '/Product/Name!=Bucket')).json).toBe(2);
  });

  test('without order, entities come out in storage order, updated ones in place', async () => {
    await call('PATCH', '/Product/Sku=A-1', { Price: 99 });
    expect((await call('GET', '/Product/_/select=Sku')).json).toEqual([{ Sku: 'A-1' }, { Sku: 'B-2' }, { Sku: 'C-3' }]);
  });
});

describe('writes are all-or-nothing', () => {
  test('a batch with one taken key stores none of its entities', async () => {
    const res = await call('POST', '/Product', [
      { Sku: 'D-4', Name: 'Drill' },
      { Sku: 'A-1', Name: 'Axe' },
    ]);
    expect([res.status, res.json.ErrorCode, res.json.Message]).toEqual([
      409,
      'Conflict',
      'Another entity already has the key ["A-1"]; nothing was written',
    ]);
    expect((await call('REPORT', '/Product')).json).toBe(3);
  });

  test('an update that moves an entity onto a taken key changes nothing', async () => {
    expect((await call('PATCH', '/Product/Sku=B-2', { Sku: 'C-3' })).status).toBe(409);
    expect((await call('GET', '/Product/Sku=B-2/select=Name')).json).toEqual([{ Name: 'Bucket' }]);
  });

  test('an unsafe DELETE removes every match in one write', async () => {
    expect((await call('DELETE', '/Product/Price<100/unsafe=true')).status).toBe(200);
    expect((await call('GET', '/Product/_/select=Sku')).json).toEqual([{ Sku: 'A-1' }]);
  });
});
