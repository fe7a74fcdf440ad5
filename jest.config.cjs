/** Tests run from sources: workspace packages map to their src. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/examples'],
  testMatch: ['**/test/**/*.test.ts', '**/examples/**/*.test.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    '^@resourcery/core/storage$': '<rootDir>/packages/core/src/storage/index.ts',
    '^@resourcery/core/internal$': '<rootDir>/packages/core/src/internal/index.ts',
    '^@resourcery/node/internal$': '<rootDir>/packages/node/src/internal.ts',
    '^@resourcery/(core|node|express|koa|fastify|opentelemetry|cli|sql|client)$': '<rootDir>/packages/$1/src/index.ts',
  },
  transform: {
    '^.+\\.(t|j)s$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
    // PGlite's CommonJS build still calls import('fs'), which jest's VM refuses: swc turns it into require.
    '@electric-sql[\\\\/]pglite[\\\\/]dist[\\\\/][^\\\\/]+\\.cjs$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  // PGlite ships ESM that jest must turn into CommonJS like our sources.
  transformIgnorePatterns: ['/node_modules/(?!(\\.pnpm/[^/]+/node_modules/)?(@electric-sql/pglite)/)'],
  // Generous: a loaded machine (CI beside other work) must not turn slow into failed; a hung test still fails.
  testTimeout: 60000,
};
