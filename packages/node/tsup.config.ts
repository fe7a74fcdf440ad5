import { packageConfig } from '../../tsup.base';

export default packageConfig({
  // The public face and the sibling adapters' helpers, sharing one chunk.
  entry: { index: 'src/index.ts', internal: 'src/internal.ts' },
  splitting: true,
});
