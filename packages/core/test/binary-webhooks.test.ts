import type { Service } from '@resourcery/core';
import { call, Receiver, serviceWithPeople } from './webhook-receiver';

/**
 * A binary resource as a webhook's custom payload source (docs/binary-resources.md): its
 * bytes are sent as they are, with its content type, read with the rights of whoever
 * saved the webhook.
 */

const HOOKS = '/Service.Admin.Webhook';
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');
// JSON as an app wrote it: spacing and key order that re-serializing entities would change.
const BADGE = '{ "z" : 1,  "a" : [ ] }';

let receiver: Receiver;
let service: Service;
const asked: Array<Record<string, string | null>> = [];

beforeEach(async () => {
  receiver = await Receiver.start();
  asked.length = 0;
  service = serviceWithPeople({
    apiKeys: [{ key: 'root' }, { key: 'hooker', allow: [{ resources: ['Service.Admin.Webhook', 'Person'] }] }],
    webhooks: { retrySchedule: [0] },
  });
  service.addBinaryResource({
    name: 'Chart.Png',
    contentType: 'image/png',
    read: ({ params }) => {
      asked.push({ ...params });
      return Buffer.from(PNG);
    },
  });
  service.addBinaryResource({ name: 'Badge', contentType: 'application/json', read: () => BADGE });
  await call(service, 'POST', '/Person', { Id: 1, Name: 'Ada', Age: 36 }, { authorization: 'apikey root' });
});

afterEach(async () => {
  await service.close();
  await receiver.close();
});

const root = { authorization: 'apikey root' };

async function hook(uri: string, headers: Record<string, string> = {}) {
  const saved = await call(
    service,
    'POST',
    HOOKS,
    {
      Destination: `${receiver.url}/hook`,
      EventSelector: '/Person.Updated',
      Headers: headers,
      CustomPayloadRequest: { URI: uri, Headers: { Authorization: 'apikey root' }, BreakOnError: true },
    },
    root,
  );
  expect([saved.status, saved.body.Message]).toEqual([201, undefined]);
}

test("the bytes go as they are with the resource's content type, whatever the webhook's Content-Type", async () => {
  await hook('/Chart.Png/Size=2', { 'Content-Type': 'application/jsonlines' });
  await call(service, 'PATCH', '/Person/Id=1', { Age: 37 }, root);
  const [got] = await receiver.waitFor(1);
  expect(got.headers['content-type']).toBe('image/png');
  expect(got.body).toEqual(PNG);
  expect(asked).toEqual([{ Size: '2' }]);
});

test('a binary resource of a JSON type is sent byte for byte, not read as entities', async () => {
  await hook('/Badge');
  await call(service, 'PATCH', '/Person/Id=1', { Age: 37 }, root);
  const [got] = await receiver.waitFor(1);
  expect(got.headers['content-type']).toBe('application/json');
  expect(got.body.toString('utf8')).toBe(BADGE);
});

test('a saver who may not read the binary resource cannot name it: 403, and nothing is read', async () => {
  const r = await call(
    service,
    'POST',
    HOOKS,
    { Destination: `${receiver.url}/hook`, EventSelector: '/Person.Updated', CustomPayloadRequest: { URI: '/Chart.Png' } },
    { authorization: 'apikey hooker' },
  );
  expect([r.status, r.body.ErrorCode]).toEqual([403, 'Forbidden']);
  await call(service, 'PATCH', '/Person/Id=1', { Age: 37 }, root);
  await service.webhooks.idle();
  expect(receiver.calls).toEqual([]);
  expect(asked).toEqual([]);
});
