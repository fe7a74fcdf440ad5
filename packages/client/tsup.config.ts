import { packageConfig } from '../../tsup.base';

// Browsers too: no Node-only target.
export default packageConfig({ target: 'es2022' });
