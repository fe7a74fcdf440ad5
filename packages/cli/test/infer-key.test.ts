import fc from 'fast-check';
import { EqualityIndex, type Entity } from '@resourcery/core/storage';
import { inferKey } from '../src/serve';

/**
 * The CLI infers json-server's key (`id`, `Id` or `ID`, every entity holding its own) in
 * one pass with the key's index: the same answer as checking every value against a set.
 */
describe('key inference with the equality index', () => {
  const value = fc.oneof(fc.integer({ min: 0, max: 8 }), fc.constantFrom('1', '2', 'a', true, null), fc.constant(undefined));
  const entity = fc.record({ id: value, ID: value, Id: value }, { requiredKeys: [] });

  test('answers as the set check does, for any entities', () => {
    fc.assert(
      fc.property(fc.array(entity, { maxLength: 8 }), (raw) => {
        const entities = raw.map((e) => Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined))) as Entity[];
        const index = new EqualityIndex(() => entities);
        expect(inferKey(entities, (p) => index.unique(p, entities.length))).toBe(inferKey(entities));
      }),
      { numRuns: 2000 },
    );
  });

  test('a number and the string spelled so are two keys; a repeated value is none', () => {
    const index = (entities: Entity[]) => (p: string) => new EqualityIndex(() => entities).unique(p, entities.length);
    const mixed = [{ id: 7 }, { id: '7' }, { id: 8 }];
    expect(inferKey(mixed, index(mixed))).toBe('id');
    const repeated = [{ id: 1 }, { id: 2 }, { id: 1 }];
    expect(inferKey(repeated, index(repeated))).toBeUndefined();
    const other = [{ Id: 1, id: null }, { Id: 2 }];
    expect(inferKey(other, index(other))).toBe('Id');
  });
});
