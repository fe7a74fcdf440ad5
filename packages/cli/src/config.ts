import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ApiKeyConfig, CorsOptions, IndexDefinition, ViewDefinition } from '@resourcery/core';
import { isProbePath } from './args.js';

/** What a config file may say about one resource. */
export interface ResourceConfig {
  description?: string;
  /** The key property (one name, or several for a composite key): see docs/keys.md. Default: id/Id when every entity has one. */
  key?: string | string[];
  /** JSON Schema of one entity. */
  schema?: Record<string, unknown>;
  views?: ViewDefinition[];
  /** Only GET, HEAD and REPORT. */
  readOnly?: boolean;
  /** Indexes for the properties users filter and sort on (a database builds them; docs/cli.md#the-config-file). */
  indexes?: IndexDefinition[];
}

/** `resourcery.config.json` or `resourcery.config.mjs` (default export): what flags cannot say. */
export interface CliConfig {
  resources?: Record<string, ResourceConfig>;
  apiKeys?: ApiKeyConfig[];
  cors?: boolean | CorsOptions;
  limits?: {
    maxBodyBytes?: number;
    maxErrorRecords?: number;
    maxErrorRecordChars?: number;
    maxNestingDepth?: number;
    maxEntities?: number;
    maxCausedRequests?: number;
    /** Characters one request's search and search_regex may scan (docs/limits.md); --search-budget wins. */
    searchBudget?: number;
  };
  /** `serve postgres://...`: the pool (docs/deployment.md#postgresql-in-production); flags win. */
  database?: { poolSize?: number; acquireTimeoutMs?: number; connectTimeoutMs?: number };
  /** A path answered with Prometheus metrics, as --metrics-path (which wins): docs/operations.md#metrics. */
  metricsPath?: string;
}

const CONFIG_FILES = ['resourcery.config.mjs', 'resourcery.config.json'];

/** A config file that cannot be used; the message names the file and the setting. */
export class ConfigError extends Error {}

/** Reads the given config file, or the default one in `cwd` if there is one. */
export async function loadConfig(file: string | undefined, cwd = process.cwd()): Promise<{ config: CliConfig; file?: string }> {
  const found = file ?? CONFIG_FILES.map((f) => path.join(cwd, f)).find((f) => existsSync(f));
  if (found === undefined) return { config: {} };
  const absolute = path.resolve(cwd, found);
  if (!existsSync(absolute)) throw new ConfigError(`config file ${found} does not exist`);
  let raw: unknown;
  if (/\.m?js$/i.test(absolute)) {
    try {
      raw = ((await import(pathToFileURL(absolute).href)) as { default?: unknown }).default;
    } catch (e) {
      throw new ConfigError(`${found} could not be loaded: ${(e as Error).message}`);
    }
  } else {
    try {
      raw = JSON.parse(await readFile(absolute, 'utf8'));
    } catch (e) {
      throw new ConfigError(`${found} is not valid JSON: ${(e as Error).message}`);
    }
  }
  const problems = validateConfig(raw);
  if (problems.length > 0) throw new ConfigError(`${found} is not a valid config:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  return { config: raw as CliConfig, file: found };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');
const METHODS = new Set(['GET', 'HEAD', 'REPORT', 'POST', 'PUT', 'PATCH', 'DELETE', '*']);

/** Every problem of a config, each naming its setting; empty when it is valid. */
export function validateConfig(raw: unknown): string[] {
  const problems: string[] = [];
  if (!isObject(raw)) return ['the config must be an object (for .mjs: export default { ... })'];
  const unknown = (at: string, value: Record<string, unknown>, known: string[]) => {
    for (const k of Object.keys(value)) if (!known.includes(k)) problems.push(`${at}${k}: unknown setting (known: ${known.join(', ')})`);
  };
  unknown('', raw, ['$schema', 'resources', 'apiKeys', 'cors', 'limits', 'database', 'metricsPath']);
  if (raw.metricsPath !== undefined && (typeof raw.metricsPath !== 'string' || !isProbePath(raw.metricsPath)))
    problems.push(`metricsPath: must be a path such as /metrics, not ${JSON.stringify(raw.metricsPath)}`);
  if (raw.resources !== undefined) {
    if (!isObject(raw.resources)) problems.push('resources: must be an object of resource name -> settings');
    else for (const [name, r] of Object.entries(raw.resources)) resourceProblems(`resources.${name}`, r, problems, unknown);
  }
  if (raw.apiKeys !== undefined) {
    if (!Array.isArray(raw.apiKeys)) problems.push('apiKeys: must be an array of { "key": "...", "allow": [...] }');
    else raw.apiKeys.forEach((k, i) => apiKeyProblems(`apiKeys[${i}]`, k, problems, unknown));
  }
  if (raw.cors !== undefined && typeof raw.cors !== 'boolean') {
    if (!isObject(raw.cors)) problems.push('cors: must be true, false or { "origins": [...], "maxAge": seconds, "hosts": [...] }');
    else {
      unknown('cors.', raw.cors, ['origins', 'maxAge', 'hosts']);
      if (raw.cors.hosts !== undefined && !isStrings(raw.cors.hosts))
        problems.push("cors.hosts: must be an array of host names ('myapp.test'), or 'local'");
      const origins = raw.cors.origins;
      if (origins !== undefined && !isStrings(origins))
        problems.push("cors.origins: must be an array of origins ('https://app.example'), 'local' or '*'");
      else
        for (const o of origins ?? [])
          if (o !== '*' && o !== 'local' && !/^[a-z][a-z0-9+.-]*:\/\/[^/\s]+$/i.test(o))
            problems.push(`cors.origins: '${o}' is not an origin (scheme and host, no path), 'local' or '*'`);
      if (raw.cors.maxAge !== undefined && !isCount(raw.cors.maxAge)) problems.push('cors.maxAge: must be a whole number of seconds');
    }
  }
  if (raw.limits !== undefined) {
    if (!isObject(raw.limits)) problems.push('limits: must be an object');
    else {
      const limits = [
        'maxBodyBytes',
        'maxErrorRecords',
        'maxErrorRecordChars',
        'maxNestingDepth',
        'maxEntities',
        'maxCausedRequests',
        'searchBudget',
      ];
      unknown('limits.', raw.limits, limits);
      for (const k of limits)
        if (raw.limits[k] !== undefined && !isCount(raw.limits[k])) problems.push(`limits.${k}: must be a whole number`);
    }
  }
  if (raw.database !== undefined) {
    if (!isObject(raw.database)) problems.push('database: must be an object');
    else {
      const settings = ['poolSize', 'acquireTimeoutMs', 'connectTimeoutMs'];
      unknown('database.', raw.database, settings);
      for (const k of settings)
        if (raw.database[k] !== undefined && !isCount(raw.database[k])) problems.push(`database.${k}: must be a whole number`);
      if (raw.database.poolSize === 0) problems.push('database.poolSize: must be at least 1');
    }
  }
  return problems;
}

const isCount = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;

type Unknown = (at: string, value: Record<string, unknown>, known: string[]) => void;

function resourceProblems(at: string, r: unknown, problems: string[], unknown: Unknown): void {
  if (!isObject(r)) {
    problems.push(`${at}: must be an object`);
    return;
  }
  unknown(`${at}.`, r, ['description', 'key', 'schema', 'views', 'readOnly', 'indexes']);
  if (r.indexes !== undefined) indexProblems(`${at}.indexes`, r.indexes, problems, unknown);
  if (r.description !== undefined && typeof r.description !== 'string') problems.push(`${at}.description: must be a string`);
  const key = r.key;
  const names = typeof key === 'string' ? [key] : Array.isArray(key) ? key : null;
  if (key !== undefined && (names === null || names.length === 0 || names.some((n) => typeof n !== 'string' || n === '')))
    problems.push(`${at}.key: must be a property name ("id") or a list of them (["shop", "no"])`);
  if (r.schema !== undefined && !isObject(r.schema)) problems.push(`${at}.schema: must be a JSON Schema object`);
  if (r.readOnly !== undefined && typeof r.readOnly !== 'boolean') problems.push(`${at}.readOnly: must be true or false`);
  if (r.views !== undefined) {
    if (!Array.isArray(r.views)) problems.push(`${at}.views: must be an array of { "name", "conditions", "meta" }`);
    else {
      r.views.forEach((v, i) => {
        if (!isObject(v) || typeof v.name !== 'string' || v.name === '') problems.push(`${at}.views[${i}]: needs a "name"`);
        else {
          unknown(`${at}.views[${i}].`, v, ['name', 'description', 'conditions', 'meta']);
          for (const k of ['description', 'conditions', 'meta'])
            if (v[k] !== undefined && typeof v[k] !== 'string') problems.push(`${at}.views[${i}].${k}: must be a string in URI syntax`);
        }
      });
    }
  }
}

const isName = (v: unknown) => typeof v === 'string' && v !== '' && !v.includes('.');

/** `indexes`: property names, lists of them, or { "properties", "unique", "ignoreCase" } (docs/storage.md#indexes). */
function indexProblems(at: string, indexes: unknown, problems: string[], unknown: Unknown): void {
  const shape =
    'a top-level property name ("city"), a list of them (["age", "score"]) or { "properties": ..., "unique": true, "ignoreCase": true }';
  if (!Array.isArray(indexes)) return void problems.push(`${at}: must be an array, each index ${shape}`);
  indexes.forEach((index, i) => {
    const names = (v: unknown) => isName(v) || (Array.isArray(v) && v.length > 0 && v.every(isName));
    if (isObject(index)) {
      unknown(`${at}[${i}].`, index, ['properties', 'unique', 'ignoreCase']);
      if (!names(index.properties)) problems.push(`${at}[${i}].properties: must be ${shape.split(' or {')[0]}`);
      for (const k of ['unique', 'ignoreCase'])
        if (index[k] !== undefined && typeof index[k] !== 'boolean') problems.push(`${at}[${i}].${k}: must be true or false`);
    } else if (!names(index)) problems.push(`${at}[${i}]: must be ${shape}`);
  });
}

function apiKeyProblems(at: string, k: unknown, problems: string[], unknown: Unknown): void {
  if (!isObject(k) || typeof k.key !== 'string' || k.key === '') {
    problems.push(`${at}: needs a non-empty "key"`);
    return;
  }
  unknown(`${at}.`, k, ['key', 'allow', 'description']);
  if (k.allow === undefined) return;
  if (!Array.isArray(k.allow)) {
    problems.push(`${at}.allow: must be an array of { "resources": [...], "methods": [...] }`);
    return;
  }
  k.allow.forEach((rule, j) => {
    const where = `${at}.allow[${j}]`;
    if (!isObject(rule)) return void problems.push(`${where}: must be an object`);
    unknown(`${where}.`, rule, ['resources', 'methods']);
    if (rule.resources !== undefined && !isStrings(rule.resources))
      problems.push(`${where}.resources: must be an array of resource names ('*' wildcard)`);
    if (rule.methods !== undefined) {
      if (!isStrings(rule.methods)) problems.push(`${where}.methods: must be an array of methods`);
      else
        for (const m of rule.methods)
          if (!METHODS.has(m.toUpperCase())) problems.push(`${where}.methods: '${m}' is not a method (${[...METHODS].join(', ')})`);
    }
  });
}
