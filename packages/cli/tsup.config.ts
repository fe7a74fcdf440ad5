import { readFileSync } from 'node:fs';
import { packageConfig } from '../../tsup.base';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

export default packageConfig({
  entry: ['src/index.ts', 'src/cli.ts'],
  dts: { entry: 'src/index.ts' },
  // `resourcery --version`, fixed when the package is built.
  define: { __RESOURCERY_VERSION__: JSON.stringify(version) },
});
