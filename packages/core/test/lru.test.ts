import { Lru } from '../src/util/lru';

test('a full cache forgets an entry not read lately and keeps the ones read', () => {
  const lru = new Lru<string, number>(3);
  lru.set('a', 1);
  lru.set('b', 2);
  lru.set('c', 3);
  lru.set('d', 4);
  // Nothing was read: the oldest goes.
  expect(lru.get('a')).toBeUndefined();
  expect(lru.size).toBe(3);
  expect(lru.get('b')).toBe(2);
  lru.set('e', 5);
  // b was read, c was not: c goes.
  expect([lru.get('b'), lru.get('c'), lru.get('d'), lru.get('e')]).toEqual([2, undefined, 4, 5]);
  // Every older entry was read since the sweep passed: one entry goes, whichever the sweep meets first unread.
  lru.set('f', 6);
  expect([lru.get('b'), lru.get('d'), lru.get('e'), lru.get('f')].filter((v) => v !== undefined)).toHaveLength(3);
  lru.set('e', 50);
  expect(lru.get('e')).toBe(50);
  expect(lru.size).toBe(3);
});

test('a hot entry survives any number of one-off entries', () => {
  const lru = new Lru<number, number>(10);
  lru.set(-1, -1);
  for (let i = 0; i < 1000; i++) {
    expect(lru.get(-1)).toBe(-1);
    lru.set(i, i);
    expect(lru.size).toBeLessThanOrEqual(10);
  }
});
