import { defineConfig } from 'tsup';
// content-type 3 ships only ESM: bundled, so the CJS build needs no require(esm) (Node < 20.19).
export default defineConfig({ entry: ['src/index.ts'], format: ['esm', 'cjs'], dts: true, clean: true, target: 'node20', sourcemap: false, noExternal: ['content-type'] });
