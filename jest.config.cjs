/** Tests run from sources: workspace packages map to their src. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/examples'],
  testMatch: ['**/test/**/*.test.ts', '**/examples/**/*.test.ts'],
  moduleNameMapper: {
    '^(\.{1,2}/.*)\.js$': '$1', '^@resourcery/(core|node|express|koa|cli|sql)$': '<rootDir>/packages/$1/src/index.ts' },
  transform: { '^.+\\.(t|j)s$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] },
  // content-type 3 ships only ESM: let swc turn it into CommonJS like our sources.
  transformIgnorePatterns: ['/node_modules/(?!(\\.pnpm/content-type@[^/]+/node_modules/)?content-type/)'],
  testTimeout: 20000,
};
