import { createService, type RaisedEvent } from '@resourcery/core';
import { call } from './webhook-receiver';

function listen(service: ReturnType<typeof createService>): RaisedEvent[] {
  const seen: RaisedEvent[] = [];
  service.events.subscribe((e) => {
    seen.push(e);
  });
  return seen;
}

describe('event resources are listed with Kind EventResource and no methods (SPEC 2.6, 6.1)', () => {
  test('an event declared with defineEvent is listed and takes no requests', async () => {
    const service = createService();
    service.defineEvent('Shipment.Left', { description: 'A shipment left the warehouse' });
    const listing = await call(service, 'GET', '/Service.AvailableResource/Kind=EventResource&Name=Shipment.Left');
    expect(listing.body).toEqual([
      expect.objectContaining({ Name: 'Shipment.Left', Description: 'A shipment left the warehouse', Methods: [], Kind: 'EventResource' }),
    ]);
    const get = await call(service, 'GET', '/Shipment.Left');
    expect(get.status).toBe(405);
    await service.close();
  });

  test('an entity resource declares its Inserted, Updated and Deleted events', async () => {
    const service = createService();
    service.addResource({ name: 'Shop.Order' });
    const listing = await call(service, 'GET', '/Service.AvailableResource/Kind=EventResource/order_asc=Name');
    expect(listing.body.map((r: { Name: string }) => r.Name)).toEqual(['Shop.Order.Deleted', 'Shop.Order.Inserted', 'Shop.Order.Updated']);
    await service.close();
  });

  test('a second event of the same name is refused and the first one stays', () => {
    const service = createService();
    service.defineEvent('Tick', { contentType: 'text/plain' });
    expect(() => service.defineEvent('tick')).toThrow(/already exists/);
    expect(service.events.get('Tick')?.contentType).toBe('text/plain');
  });
});

describe('entity resources raise change events with the affected entities (DESIGN 8)', () => {
  test('POST, PATCH and DELETE raise Inserted, Updated and Deleted with output entities', async () => {
    const service = createService();
    service.addResource({ name: 'Pet', toOutput: ({ Secret, ...rest }) => rest });
    const seen = listen(service);
    await call(service, 'POST', '/Pet', [
      { Name: 'Rex', Secret: 's' },
      { Name: 'Tom', Secret: 's' },
    ]);
    await call(service, 'PATCH', '/Pet/Name=Rex', { Age: 3 });
    await call(service, 'DELETE', '/Pet/Name=Tom');
    expect(seen.map((e) => [e.name, e.entities])).toEqual([
      ['Pet.Inserted', [{ Name: 'Rex' }, { Name: 'Tom' }]],
      ['Pet.Updated', [{ Name: 'Rex', Age: 3 }]],
      ['Pet.Deleted', [{ Name: 'Tom' }]],
    ]);
    await service.close();
  });

  test('a write that changes nothing raises nothing', async () => {
    const service = createService();
    service.addResource({ name: 'Pet' });
    const seen = listen(service);
    await call(service, 'DELETE', '/Pet/Name=Nobody');
    await call(service, 'PATCH', '/Pet/Name=Nobody', { Age: 1 });
    expect(seen).toEqual([]);
    await service.close();
  });

  test('the events option turns change events off for the service, and per resource on again', async () => {
    const service = createService({ events: false });
    service.addResource({ name: 'Quiet' });
    service.addResource({ name: 'Loud', events: true });
    const seen = listen(service);
    await call(service, 'POST', '/Quiet', { A: 1 });
    await call(service, 'POST', '/Loud', { A: 1 });
    expect(seen.map((e) => e.name)).toEqual(['Loud.Inserted']);
    expect(service.events.get('Quiet.Inserted')).toBeUndefined();
    await service.close();
  });

  test('a resource can switch its own events off', async () => {
    const service = createService();
    service.addResource({ name: 'Cache', events: false });
    const seen = listen(service);
    await call(service, 'POST', '/Cache', { K: 1 });
    expect(seen).toEqual([]);
    await service.close();
  });
});

describe('service.raise takes entity and binary payloads', () => {
  test('one entity is raised as an array of one', async () => {
    const service = createService();
    service.defineEvent('Alarm');
    const seen = listen(service);
    await service.raise('Alarm', { Level: 3 });
    expect(seen[0].entities).toEqual([{ Level: 3 }]);
    expect(seen[0].binary).toBeUndefined();
  });

  test('a binary event carries its bytes and its Content-Type', async () => {
    const service = createService();
    service.defineEvent('Snapshot', { contentType: 'image/png' });
    const seen = listen(service);
    await service.raise('Snapshot', new Uint8Array([137, 80, 78, 71]));
    await service.raise('Snapshot', { body: 'text', contentType: 'text/plain' });
    expect(seen[0].binary).toEqual({ contentType: 'image/png', body: new Uint8Array([137, 80, 78, 71]) });
    expect(seen[1].binary?.contentType).toBe('text/plain');
    expect(Buffer.from(seen[1].binary!.body).toString()).toBe('text');
  });

  test('unknown events and payloads of the wrong kind are programming errors', async () => {
    const service = createService();
    service.defineEvent('Alarm');
    service.defineEvent('Snapshot', { contentType: 'image/png' });
    await expect(service.raise('Nope', {})).rejects.toThrow(/Unknown event 'Nope'/);
    await expect(service.raise('Alarm', [1, 2] as never)).rejects.toThrow(/object or an array of objects/);
    await expect(service.raise('Snapshot', { Level: 1 } as never)).rejects.toThrow(/binary/);
  });

  test('an empty entity payload raises nothing', async () => {
    const service = createService();
    service.defineEvent('Alarm');
    const seen = listen(service);
    await service.raise('Alarm', []);
    expect(seen).toEqual([]);
  });
});

describe('raise waits for listeners, and a failing listener never fails the raising request', () => {
  test('raise resolves only after every listener finished', async () => {
    const service = createService();
    service.defineEvent('Alarm');
    let done = false;
    service.events.subscribe(async () => {
      await new Promise((r) => setImmediate(r));
      done = true;
    });
    await service.raise('Alarm', { A: 1 });
    expect(done).toBe(true);
  });

  test('a listener that throws is reported and the POST still succeeds', async () => {
    const service = createService();
    service.addResource({ name: 'Pet' });
    const reported: string[] = [];
    service.events.onListenerError = (error, event) => reported.push(`${event.name}: ${(error as Error).message}`);
    service.events.subscribe(() => {
      throw new Error('listener broke');
    });
    const answer = await call(service, 'POST', '/Pet', { Name: 'Rex' });
    expect(answer.status).toBe(201);
    expect(reported).toEqual(['Pet.Inserted: listener broke']);
    await service.close();
  });
});
