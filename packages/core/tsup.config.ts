import { packageConfig } from '../../tsup.base';

export default packageConfig({
  // Two entries sharing chunks (in CommonJS too), so both see one MemoryStorage class and one parse cache.
  entry: { index: 'src/index.ts', storage: 'src/storage/index.ts' },
  splitting: true,
});
