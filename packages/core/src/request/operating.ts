import { checkNesting, checkNestingInSlices } from '../util/nesting.js';
import type { Negotiated } from '../content-types/protocols.js';
import { ServiceError } from '../errors.js';
import type { Caller } from '../model/caller.js';
import type { ChangeKind, Resource } from '../model/resources.js';
import type { RowRule } from '../model/rules.js';
import type { OperationContext, Written } from '../operations/context.js';
import { readSource } from '../outgoing/source-destination.js';
import type { Entity } from '../query/conditions.js';
import type { CompiledQuery } from '../query/evaluate.js';
import { checkLocators, type DerivedLimits } from '../query/large.js';
import type { WriteBatch } from '../storage/storage.js';
import type { PreparedEvent } from '../webhooks/events.js';
import type { RequestContext } from './context.js';
import type { PipelineHost } from './host.js';
import { writeConditions } from './preconditions.js';
import { storageWrite } from '../storage/clock.js';

/**
 * What an operation gets of its request: one object, its body read and its events raised
 * only when the operation asks (a GET does neither, so it makes no closures for them).
 */
export class Operating implements OperationContext {
  private reading: Promise<Entity[]> | undefined;
  private authorizing: ((resource: string, method: string) => void) | undefined;
  /** If-Match and If-None-Match, parsed when a write first asks (a GET never does). */
  private conditions: { ifMatch?: string[]; ifNoneMatch?: string[] } | undefined;

  constructor(
    private readonly host: PipelineHost,
    private readonly ctx: RequestContext,
    readonly resource: Resource,
    readonly query: CompiledQuery,
    readonly caller: Caller,
    readonly rows: RowRule | null,
    private readonly output: Negotiated,
  ) {
    if (query.meta.add !== null || query.meta.select !== null) checkLocators(query.meta, host.options);
  }

  // Read from the service's options and the request when asked, not copied into every
  // request's Operating: a GET reads the budgets once and the write conditions never.
  get searchBudget(): number {
    return this.host.options.searchBudget;
  }

  get derived(): DerivedLimits {
    return this.host.options;
  }

  get ifMatch(): string[] | undefined {
    return (this.conditions ??= writeConditions(this.ctx)).ifMatch;
  }

  get ifNoneMatch(): string[] | undefined {
    return (this.conditions ??= writeConditions(this.ctx)).ifNoneMatch;
  }

  /** Whether a GET's answer is written one entity at a time (SelectQuery.stream); read by GET only. */
  get stream(): boolean {
    return this.ctx.method === 'GET' && this.output.contentType.streams === true && streamable(this.ctx);
  }

  /** The caller's rights on another resource; a function of its own, as hooks get it (`beforeWrite`). */
  get authorize(): (resource: string, method: string) => void {
    return (this.authorizing ??= (resource, method) => this.host.authorize(this.caller, resource, method));
  }

  /** Read once: a retried operation (Conflict) or a Source GET must not run twice. */
  input(): Promise<Entity[]> {
    return (this.reading ??= readInput(this.host, this.ctx));
  }

  async write(batch: WriteBatch, changes: ReadonlyArray<readonly [ChangeKind, Entity[]]>, resource = this.resource): Promise<Written> {
    const { storage } = resource;
    const events: PreparedEvent[] = [];
    for (const [kind, entities] of changes) {
      const prepared = await prepareChange(this.host, resource, kind, entities, this.ctx);
      if (prepared !== null) events.push(prepared);
    }
    const writes = events.flatMap((e) => e.writes);
    // The transactional outbox: the change and its messages commit together, or neither does.
    const together = writes.length > 0 && writes.every((w) => storage.joins?.(w.storage) === true);
    await storageWrite(storage, together ? { ...batch, with: writes } : batch);
    return {
      raise: async () => {
        for (const event of events) await event.finish(together);
      },
    };
  }
}

/** Inputs of more entities are checked for nesting in slices, a turn between them (docs/limits.md#large-work). */
const NESTING_IN_ONE_GO = 2000;

/** The entities a POST/PUT/PATCH writes: from the body (or the Source header). */
async function readInput(host: PipelineHost, ctx: RequestContext): Promise<Entity[]> {
  const entities = await readEntities(host, ctx);
  const most = host.options.maxEntities;
  if (entities.length > most)
    throw new ServiceError(
      'PayloadTooLarge',
      `${entities.length} entities in one request, more than the limit of ${most} (service option maxEntities, docs/limits.md): send them in several requests`,
    );
  // Before anything walks them: deeper input would overflow recursive code (stringify, copies).
  if (entities.length > NESTING_IN_ONE_GO) await checkNestingInSlices(entities, host.options.maxNestingDepth);
  else checkNesting(entities, host.options.maxNestingDepth);
  return entities;
}

async function readEntities(host: PipelineHost, ctx: RequestContext): Promise<Entity[]> {
  const source = ctx.header('source');
  if (source !== undefined) return readSource(host.headerRequests, ctx, source);
  const body = await ctx.body();
  if (body === null) throw new ServiceError('NoDataSource', `${ctx.method} needs a body (one entity or an array of entities)`);
  const { contentType, params } = host.protocols.forContentType(ctx.header('content-type'));
  return contentType.read!(body, { params });
}

/** A change event of the resource, prepared before the change is written; null when it raises none. */
function prepareChange(
  host: PipelineHost,
  resource: Resource,
  kind: ChangeKind,
  entities: Entity[],
  ctx: RequestContext,
): Promise<PreparedEvent | null> | null {
  if (!resource.changeEvents.includes(kind) || entities.length === 0) return null;
  return host.events.prepare(
    `${resource.name}.${kind}`,
    entities.map((e) => resource.output(e)),
    { depth: ctx.depth, origin: ctx.origin },
  );
}

/** Whether a GET's answer may be written while the storage still reads it: nothing needs it whole first (a Destination, If-Match, If-None-Match). */
function streamable(ctx: RequestContext): boolean {
  return ctx.header('destination') === undefined && ctx.header('if-match') === undefined && ctx.header('if-none-match') === undefined;
}
