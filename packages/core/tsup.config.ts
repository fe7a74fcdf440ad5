import { defineConfig } from 'tsup';
export default defineConfig({
  // Two entries sharing chunks (in CommonJS too), so both see one MemoryStorage class and one parse cache.
  entry: { index: 'src/index.ts', storage: 'src/storage/index.ts' },
  splitting: true,
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  target: 'node20',
  sourcemap: false,
});
