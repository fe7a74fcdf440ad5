// Runs the independent OpenAPI tools (ES modules that jest's CommonJS runtime cannot load)
// on a document file: validates it, then writes the types openapi-typescript generates.
// Usage: node openapi-tools.mjs <document.json> <types.ts>; prints the validation result as JSON.
import { readFile, writeFile } from 'node:fs/promises';
import { compileErrors, validate } from '@readme/openapi-parser';
import openapiTS, { astToString } from 'openapi-typescript';

const [documentPath, typesPath] = process.argv.slice(2);
const doc = JSON.parse(await readFile(documentPath, 'utf8'));
const result = await validate(structuredClone(doc));
if (result.valid) await writeFile(typesPath, astToString(await openapiTS(doc)));
console.log(JSON.stringify({ valid: result.valid, errors: result.valid ? '' : compileErrors(result) }));
