/**
 * `@resourcery/core/internal`: knobs for the project's own tests and benchmarks, not a
 * public API (no semver promise; docs/architecture.md). Apps use `createService`'s options.
 */
export { codeGenerationActive, generatedScans, setCodeGeneration } from '../query/compiled-scan.js';
export { clearParseCache } from '../grammar/parse.js';
