import { defineConfig, type Options } from 'tsup';

/** The build every package shares (ESM + CJS with declarations, for Node 20); each package adds what differs. */
export function packageConfig(options: Options = {}) {
  return defineConfig({
    entry: ['src/index.ts'],
    format: ['esm', 'cjs'],
    // `@internal` members (the service's parts) stay out of the published types.
    dts: { compilerOptions: { stripInternal: true } },
    clean: true,
    target: 'node20',
    sourcemap: false,
    ...options,
  });
}
