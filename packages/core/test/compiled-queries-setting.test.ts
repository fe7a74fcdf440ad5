import { createService, MemoryStorage, type Service } from '@resourcery/core';
import { generatedScans } from '@resourcery/core/internal';
import { call, RAW } from './handle-support';

// compiledQueries is a setting of one service (docs/performance.md): a service made with
// `false` never generates a scan, and making it does not switch off another service's.
function people(options: { compiledQueries?: boolean }): Service {
  const service = createService(options);
  const rows = Array.from({ length: 50 }, (_, i) => ({ Id: i + 1, Name: `P${i + 1}`, Age: 20 + (i % 40), Town: i % 2 ? 'Oslo' : 'Rome' }));
  service.addResource({ name: 'Person', key: 'Id', storage: new MemoryStorage(rows) });
  return service;
}

/** Runs one URI (a locator spelling no other test uses) several times; returns how many scans were generated meanwhile. */
async function generatedBy(service: Service, locator: string): Promise<{ generated: number; bodies: string[] }> {
  const before = generatedScans();
  const bodies: string[] = [];
  for (let i = 0; i < 5; i++) bodies.push((await call(service, 'GET', `/Person/${locator}>30&Town=Oslo`, { headers: RAW })).text);
  return { generated: generatedScans() - before, bodies };
}

test('a service with compiledQueries: false generates no scan, and does not switch off a service made after it', async () => {
  const off = people({ compiledQueries: false });
  const on = people({});
  const offRun = await generatedBy(off, 'Age');
  expect(offRun.generated).toBe(0);
  const onRun = await generatedBy(on, 'aGe');
  expect(onRun.generated).toBeGreaterThan(0);
  // Both answer the same.
  expect(onRun.bodies).toEqual(offRun.bodies);
  expect(JSON.parse(onRun.bodies[0])).toHaveLength(
    Array.from({ length: 50 }, (_, i) => i).filter((i) => i % 2 && 20 + (i % 40) > 30).length,
  );
});
