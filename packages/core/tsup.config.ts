import { packageConfig } from '../../tsup.base';

export default packageConfig({
  // Entries sharing chunks (in CommonJS too), so all see one MemoryStorage class and one parse cache.
  entry: { index: 'src/index.ts', storage: 'src/storage/index.ts', internal: 'src/internal/index.ts' },
  splitting: true,
});
