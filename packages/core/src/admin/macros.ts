import { AdminCache } from '../storage/admin-cache.js';
import { isEntityBody, isStringRecord } from '../content-types/json.js';
import { ServiceError } from '../errors.js';
import { parseUri, type ConditionItem, type MetaEntry, type ParsedUri } from '../grammar/parse.js';
import { isSecretHeader } from '../model/redaction.js';
import { joinMeta } from '../query/meta-conditions.js';
import { LRUCache } from 'lru-cache';
import type { Protocols } from '../content-types/protocols.js';
import type { Entity } from '../query/conditions.js';
import { keyConditions } from '../model/key.js';
import type { ResourceDefinition } from '../model/resources.js';
import { SELECT_ALL, type Storage, type WriteBatch } from '../storage/storage.js';

export const MACRO_RESOURCE = 'Service.Admin.Macro';
/** How many macros one call may pass through (a -> b -> c ...). */
const MAX_MACRO_DEPTH = 16;

export interface Macro {
  Name: string;
  Uri: string;
  Body: Entity | Entity[] | null;
  Headers: Record<string, string> | null;
  OverwriteBody: boolean;
  OverwriteHeaders: boolean;
}

const PROPERTIES = ['Name', 'Uri', 'Body', 'Headers', 'OverwriteBody', 'OverwriteHeaders'];
const NAME = /^[\p{L}\p{N}_.]+$/u;

/** What macros need of the resources: the key a bare value addresses (docs/keys.md). */
export interface KeyedResources {
  resolve(name: string): { readonly name: string; readonly key: readonly string[] | null };
}

/** A bare key is no error where the resource it reaches has a key; the rest of the URI must still parse. */
function standingError(parsed: ParsedUri, key: readonly string[] | null): ServiceError | null {
  return parsed.bare !== undefined && key !== null ? (parsed.restError ?? null) : parsed.error;
}

/** A rewrite: the merged URI (shared through a cache) and the macros it passed through. */
interface Rewrite {
  parsed: ParsedUri;
  chain: Macro[];
}

/**
 * Macros (docs/macros.md): stored request templates called as `/$name`. The rewrite of a
 * URI is cached until a macro changes, so a cached macro call costs about a cached parse.
 */
export class Macros {
  private readonly storage: Storage;
  /** Macros by lower-case name, kept current with other instances sharing the storage. */
  private readonly byName: AdminCache<Map<string, Macro>>;
  private readonly rewrites = new LRUCache<string, Rewrite>({ max: 2000 });

  /** The Macro resource, for the service to declare. */
  readonly definition: ResourceDefinition<Macro>;

  constructor(
    storage: Storage,
    private readonly protocols: Protocols,
    private readonly resources: KeyedResources,
  ) {
    this.storage = storage;
    this.byName = new AdminCache(
      this.storage,
      () => this.load(),
      () => this.rewrites.clear(),
    );
    this.definition = {
      name: MACRO_RESOURCE,
      description: 'Macros: stored request templates, called as /$<name>',
      storage: this.uniqueNames(this.storage),
      // A shared storage refuses the second of two instances saving one name at once
      // (409, then the retried POST finds the name taken: 400).
      indexes: [{ properties: 'Name', unique: true, ignoreCase: true }],
      events: false,
      hooks: {
        beforeWrite: (entity, change) => this.validate(entity, change.existing),
        afterWrite: () => this.invalidate(),
      },
    };
  }

  invalidate(): void {
    this.byName.invalidate();
  }

  private async load(): Promise<Map<string, Macro>> {
    const map = new Map<string, Macro>();
    const { entities } = await this.storage.select(SELECT_ALL);
    for await (const e of entities as AsyncIterable<Entity>) {
      const macro = storedMacro(e);
      if (macro !== undefined) map.set(macro.Name.toLowerCase(), macro);
    }
    return map;
  }

  /** Rewrites a macro call into the request it stands for (rules 1-9 of docs/macros.md). */
  async rewrite(parsed: ParsedUri, ctx: MacroCall): Promise<ParsedUri> {
    // Checking the macros first lets another instance's change drop the cached rewrites;
    // a rewrite from macros that a write overtook meanwhile is not cached.
    const generation = this.byName.version;
    const macros = await this.byName.get();
    let rewrite = this.rewrites.get(ctx.uri);
    if (rewrite === undefined) {
      rewrite = this.resolve(parsed, macros);
      if (this.byName.current(generation)) this.rewrites.set(ctx.uri, rewrite);
    }
    for (const macro of rewrite.chain) await applyHeadersAndBody(macro, ctx, this.protocols);
    return rewrite.parsed;
  }

  private resolve(parsed: ParsedUri, macros: Map<string, Macro>): Rewrite {
    const chain: Macro[] = [];
    const seen = new Set<string>();
    // The caller's URI, then each macro's: a bare key in any of them addresses the key of the
    // resource the chain ends at, among that level's conditions (docs/macros.md rule 4: the
    // caller's come after the macro's).
    const levels: ParsedUri[] = [parsed];
    let current = parsed;
    while (current.macro) {
      const key = current.resource.toLowerCase();
      if (seen.has(key) || chain.length >= MAX_MACRO_DEPTH) {
        throw new ServiceError(
          'InfiniteLoopDetected',
          `Macro loop: ${[...chain.map((m) => `$${m.Name}`), `$${current.resource}`].join(' -> ')}`,
        );
      }
      seen.add(key);
      const macro = macros.get(key);
      if (!macro) throw new ServiceError('UnknownMacro', `Unknown macro '$${current.resource}'`);
      chain.push(macro);
      current = parseUri(macro.Uri);
      levels.push(current);
    }
    if (levels.length === 1) return { parsed, chain };
    const bare = levels.some((l) => l.bare !== undefined);
    // Unknown resource: the pipeline answers it (404) as for any request.
    const target = bare ? this.keyedTarget(current.resource) : undefined;
    const conditions: ConditionItem[] = [];
    let meta: MetaEntry[] = [];
    let view: string | null = null;
    let error: ServiceError | null = null;
    for (const level of levels.reverse()) {
      view = level.view ?? view;
      error ??= standingError(level, target?.key ?? null);
      if (level.bare !== undefined && target !== undefined && target.key !== null)
        conditions.push(...keyConditions(target.name, target.key, level.bare, level.bareValues));
      else conditions.push(...level.conditions);
      meta = joinMeta(meta, level.meta);
    }
    return { parsed: { resource: current.resource, macro: false, view, conditions, meta, error }, chain };
  }

  /** The resource a bare key reaches, or undefined when it does not exist. */
  private keyedTarget(name: string): { name: string; key: readonly string[] | null } | undefined {
    try {
      return this.resources.resolve(name);
    } catch {
      return undefined;
    }
  }

  /**
   * Names must stay unique across a whole write too (an array POST, a PATCH of many, two
   * requests at once): validate() sees one entity at a time, so each batch is checked
   * against the stored names, one write after another, before it is stored.
   */
  private uniqueNames(storage: Storage): Storage {
    let writing: Promise<unknown> = Promise.resolve();
    const checkAndWrite = async (batch: WriteBatch): Promise<void> => {
      const counts = new Map<string, number>();
      const add = (e: Entity, n: number) => {
        const key = String(e.Name).toLowerCase();
        counts.set(key, (counts.get(key) ?? 0) + n);
      };
      const { entities } = await storage.select(SELECT_ALL);
      for await (const e of entities as AsyncIterable<Entity>) add(e, 1);
      for (const t of [...(batch.delete ?? []), ...(batch.update ?? []).map((u) => u.target)]) add(t.entity, -1);
      const written = [...(batch.insert ?? []), ...(batch.update ?? []).map((u) => u.value)];
      for (const e of written) add(e, 1);
      const twice = written.find((e) => counts.get(String(e.Name).toLowerCase())! > 1);
      if (twice) invalid('Name', `Macro names are unique: '${String(twice.Name)}' would name two macros`);
      await storage.write(batch);
    };
    const guarded: Storage = {
      select: (query) => storage.select(query),
      write: (batch) => {
        const run = writing.then(() => checkAndWrite(batch));
        writing = run.catch(() => undefined);
        return run;
      },
    };
    if (storage.count) guarded.count = (query) => storage.count!(query);
    if (storage.useIndexes) guarded.useIndexes = (indexes) => storage.useIndexes!(indexes);
    if (storage.stamp) guarded.stamp = (entity) => storage.stamp!(entity);
    return guarded;
  }

  /** Validation on save (docs/macros.md); returns the macro to store. */
  private async validate(input: Entity, existing?: Macro): Promise<Macro> {
    const fields: Record<string, unknown> = {};
    let alias: unknown;
    for (const [key, value] of Object.entries(input)) {
      const name = PROPERTIES.find((p) => p.toLowerCase() === key.toLowerCase());
      if (!name) invalid(key, `Unknown property '${key}'. Macro properties: ${PROPERTIES.join(', ')}`);
      // Stored macros always say `Uri`; any other spelling (`URI`) came with this request and wins.
      if (name === 'Uri' && key !== 'Uri') alias = value;
      else fields[name] = value;
    }
    if (alias !== undefined) fields.Uri = alias;
    const { Name, Uri, Body = null, Headers = null, OverwriteBody = false, OverwriteHeaders = false } = fields;
    if (typeof Name !== 'string' || !NAME.test(Name)) invalid('Name', 'Name must be a non-empty string of letters, digits, _ and .');
    if (typeof Uri !== 'string' || Uri === '') invalid('Uri', 'Uri must be a non-empty string such as /Person/Age>30/limit=10');
    const target = (() => {
      try {
        return parseUri(Uri.startsWith('/') ? Uri : `/${Uri}`);
      } catch (e) {
        return invalid('Uri', `Uri does not parse: ${(e as Error).message}`);
      }
    })();
    // A bare key (`/Clinic.Vet/ana`) is read with the key of the resource it addresses, as a
    // request's is; after a macro (`/$cats/7`) that macro's resource decides, when it is called.
    const key = target.bare === undefined ? null : target.macro ? [] : (this.keyedTarget(target.resource)?.key ?? null);
    const error = standingError(target, key);
    if (error) invalid('Uri', `Uri does not parse: ${error.message}`);
    if (target.macro && target.resource.toLowerCase() === Name.toLowerCase()) invalid('Uri', `Macro '${Name}' may not call itself`);
    if (Body !== null && !isEntityBody(Body)) {
      invalid('Body', 'Body must be an object or an array of objects');
    }
    let headers: Record<string, string> | null = null;
    if (Headers !== null) {
      if (typeof Headers !== 'object' || Array.isArray(Headers)) invalid('Headers', 'Headers must be an object of header names and values');
      headers = {};
      const seen = new Set<string>();
      for (const [written, v] of Object.entries(Headers)) {
        // Every rule looks at the name as HTTP does: `"Authorization "` is Authorization.
        const h = written.trim();
        const key = h.toLowerCase();
        if (!HEADER_NAME.test(h)) invalid('Headers', `'${written}' is not a valid header name`);
        const refusal = refusedHeader(key);
        if (refusal !== undefined) invalid('Headers', `A macro may not carry a ${h} header: ${refusal}`);
        if (seen.has(key)) invalid('Headers', `The header ${h} is given twice`);
        seen.add(key);
        headers[h] = typeof v === 'string' ? v : JSON.stringify(v);
      }
    }
    if (typeof OverwriteBody !== 'boolean') invalid('OverwriteBody', 'OverwriteBody must be true or false');
    if (typeof OverwriteHeaders !== 'boolean') invalid('OverwriteHeaders', 'OverwriteHeaders must be true or false');
    const macros = await this.byName.get(true);
    const clash = macros.get(Name.toLowerCase());
    // By name, not identity: storages may hand out fresh objects on every select.
    if (clash && clash.Name.toLowerCase() !== String(existing?.Name ?? '').toLowerCase())
      invalid('Name', `A macro named '${clash.Name}' already exists`);
    return { Name, Uri: Uri.startsWith('/') ? Uri : `/${Uri}`, Body, Headers: headers, OverwriteBody, OverwriteHeaders };
  }
}

/**
 * A stored entity as a macro: left-out properties take their defaults (a data file's
 * hand-written `{ "Name": ..., "Uri": ... }`); one that edited storage broke is not called.
 */
function storedMacro(e: Entity): Macro | undefined {
  const { Name, Uri, Body = null, Headers = null, OverwriteBody = false, OverwriteHeaders = false } = e;
  if (typeof Name !== 'string' || typeof Uri !== 'string' || (Body !== null && !isEntityBody(Body))) return undefined;
  if (Headers !== null && !isStringRecord(Headers)) return undefined;
  if (typeof OverwriteBody !== 'boolean' || typeof OverwriteHeaders !== 'boolean') return undefined;
  return { Name, Uri, Body, Headers, OverwriteBody, OverwriteHeaders };
}

/** RFC 9110 token: the characters a header name may hold. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/**
 * Headers a macro may not set (docs/macros.md#headers-a-macro-may-set): those that send
 * data elsewhere or take it from elsewhere with the caller's rights (a macro's writer would
 * choose where every caller's data goes), and those that carry or name credentials.
 */
const REDIRECTING = new Map([
  ['source', 'it would read data for the caller from a place the macro chose'],
  ['destination', "it would send the caller's data to a place the macro chose"],
  ['host', 'it names who the request is for'],
  ['forwarded', 'it names who the request is from'],
  ['x-real-ip', 'it names who the request is from'],
  ['origin', 'it names who the request is from'],
]);

/** Why a macro may not set this header (lower-case name); undefined when it may. */
function refusedHeader(name: string): string | undefined {
  const redirecting = REDIRECTING.get(name);
  if (redirecting !== undefined) return redirecting;
  if (name.startsWith('x-forwarded-')) return 'it names who the request is from';
  if (isSecretHeader(name)) return 'each call brings its own credentials';
  return undefined;
}

function invalid(property: string, message: string): never {
  throw new ServiceError('InvalidResourceEntity', message, { data: { [property]: message } });
}

/** Rules 6 and 7: macro headers fill in (or replace), the macro body stands in (or replaces). */
/** The request a macro rewrites (request/context.ts's RequestContext is one). */
export interface MacroCall {
  readonly uri: string;
  headers: Record<string, string>;
  body(): Promise<Uint8Array | null>;
  replaceBody(body: Uint8Array): void;
}

async function applyHeadersAndBody(macro: Macro, ctx: MacroCall, protocols: Protocols): Promise<void> {
  if (macro.Headers) {
    const headers = { ...ctx.headers };
    for (const [name, value] of Object.entries(macro.Headers)) {
      const key = name.toLowerCase();
      // A macro stored before a header was refused (or written into storage by hand) never sets it.
      if (refusedHeader(key) !== undefined) continue;
      // An Accept that names none of our types itself (curl's `*/*`, a browser's list) states no preference.
      const unset = headers[key] === undefined || (key === 'accept' && !protocols.namesWritableType(headers[key]));
      if (macro.OverwriteHeaders || unset) headers[key] = value;
    }
    ctx.headers = headers;
  }
  if (macro.Body !== null && macro.Body !== undefined && (macro.OverwriteBody || (await ctx.body()) === null)) {
    ctx.replaceBody(Buffer.from(JSON.stringify(macro.Body)));
    ctx.headers = { ...ctx.headers, 'content-type': 'application/json' };
  }
}
