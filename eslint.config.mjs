// ESLint (flat config): JavaScript and typescript-eslint recommended rules, plus no import
// cycles between modules; the packages' sources also get the type-aware rules
// (recommendedTypeChecked: floating and misused promises, unsafe `any`, needless assertions).
// Formatting is Biome's (biome.json), so no style rules here.
import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import { importX } from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'packages/core/src/grammar/uri-parser.*', 'coverage/**', 'bench/results/**', '.data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // Parser and extension settings import-x needs to follow `.js` specifiers to `.ts` sources.
  importX.flatConfigs.typescript,
  {
    files: ['**/*.{ts,mjs,js,cjs}'],
    languageOptions: { globals: { ...globals.node } },
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createTypeScriptImportResolver({ project: 'tsconfig.json' })] },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // A variable a closure reads before its one assignment must stay `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  {
    files: ['**/test/**', '**/*.test.ts', 'examples/**', 'bench/**', 'scripts/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  // Type-aware rules for the packages' sources, typed by the root tsconfig.json: its paths map
  // each @resourcery/* import to the sibling's src. (projectService would type each package by
  // its own tsconfig, where a sibling resolves to its unbuilt dist: every import `any`.)
  ...tseslint.configs.recommendedTypeChecked.map((config) => ({ ...config, files: ['packages/*/src/**/*.ts'] })),
  {
    files: ['packages/*/src/**/*.ts'],
    languageOptions: { parserOptions: { project: ['./tsconfig.json'], tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // A caught value passed on as a rejection (a sync throw made async) keeps its identity.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
    },
  },
  { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
  // Scripts that run inside the browser page (puppeteer's evaluate).
  { files: ['packages/node/test/explorer-driver.mjs', 'packages/node/test/explorer-origin-driver.mjs', 'packages/node/test/explorer-live-driver.mjs', 'packages/node/test/explorer-embed-driver.mjs'], languageOptions: { globals: { ...globals.browser } } },
);
