import { ServiceError } from '../errors.js';
import type { ContentType, ProtocolProvider } from './content-type.js';
import { excel } from './excel.js';
import { json } from './json.js';
import { jsonLines } from './json-lines.js';
import { negotiate, parseAccept, parseMediaType } from './negotiation.js';
import { LRUCache } from 'lru-cache';
import type { Entity } from '../query/conditions.js';

export interface Negotiated {
  contentType: ContentType;
  /** Parameters of the chosen media type (e.g. `raw`), lower-case names. */
  params: Record<string, string>;
  /** The Content-Type header of a response it writes (forAccept's answers carry it, made once). */
  header?: string;
}

/** The Content-Type header of a response written in `type`: JSON and text say their charset. */
export function contentTypeHeader(type: ContentType): string {
  return type.mimeType === 'application/json' || type.mimeType.startsWith('text/') ? `${type.mimeType}; charset=utf-8` : type.mimeType;
}

/** An answer of forAccept: negotiated once per Accept value, shared by the requests that send it. */
function writing(contentType: ContentType, params: Record<string, string>): Negotiated {
  return { contentType, params, header: contentTypeHeader(contentType) };
}

/** The default protocol of docs/content-types.md: always present, always first. */
const DEFAULT_PROTOCOL: ProtocolProvider = { name: 'Service', identifier: 'service', contentTypes: [json, excel, jsonLines] };

interface Registered {
  type: ContentType;
  /** The MIME type and the bindings, lower-case, without repeats: what selects this type. */
  bindings: string[];
}

/** Registered protocol providers and content negotiation by binding. */
/** Spreadsheet formats people send by mistake, and what to do instead. */
const SPREADSHEET_HINTS: Record<string, string> = {
  'application/vnd.oasis.opendocument.spreadsheet':
    'OpenDocument spreadsheets (.ods) are not supported: save the file as an Excel workbook (.xlsx).',
  'application/vnd.ms-excel': 'Legacy Excel 97-2003 workbooks (.xls) are not supported: save the file as an Excel workbook (.xlsx).',
};

export class Protocols {
  private readonly providers: ProtocolProvider[] = [];
  private readonly types: Registered[] = [];
  private readonly writers: Registered[] = [];
  private readonly byBinding = new Map<string, Registered>();
  /** Clients repeat the same few Accept values; each is negotiated once. */
  private readonly acceptCache = new LRUCache<string, Negotiated | false>({ max: 256 }); // false: nothing acceptable
  /** The answer to no Accept header, made once (as each cached answer is shared by the requests that ask for it). */
  private noAccept: Negotiated | undefined;
  /** The Accept value asked last and its answer: the cache's most recent entry, read without a lookup. */
  private lastAccept: string | undefined;
  private lastChosen: Negotiated | false = false;

  constructor(defaultProtocol: ProtocolProvider = DEFAULT_PROTOCOL) {
    this.add(defaultProtocol);
  }

  get defaultType(): ContentType {
    return this.types[0].type;
  }

  /** Adds a provider; a binding another type already has keeps selecting that earlier type. */
  add(provider: ProtocolProvider): void {
    if (this.providers.some((p) => p.identifier.toLowerCase() === provider.identifier.toLowerCase())) {
      throw new Error(`A protocol with identifier '${provider.identifier}' is already registered`);
    }
    this.providers.push(provider);
    for (const type of provider.contentTypes) {
      const registered = { type, bindings: [...new Set([type.mimeType, ...type.bindings].map((b) => b.toLowerCase()))] };
      this.types.push(registered);
      if (type.write) this.writers.push(registered);
      for (const b of registered.bindings) if (!this.byBinding.has(b)) this.byBinding.set(b, registered);
    }
    this.acceptCache.clear();
    this.noAccept = undefined;
    this.lastAccept = undefined;
  }

  /** The content type that writes the response, from the Accept header (none or `*\/*`: JSON). */
  forAccept(accept: string | undefined): Negotiated {
    let chosen: Negotiated | false | undefined;
    // The value asked last is never blank (a blank one returns below without being kept): no trim.
    if (accept !== undefined && accept === this.lastAccept) chosen = this.lastChosen;
    else {
      if (accept === undefined || accept.trim() === '') return (this.noAccept ??= writing(this.defaultType, {}));
      chosen = this.acceptCache.get(accept);
      if (chosen === undefined) {
        const choice = negotiate(parseAccept(accept), this.writers);
        chosen = choice ? writing(choice.value.type, choice.params) : false;
        this.acceptCache.set(accept, chosen);
      }
      this.lastAccept = accept;
      this.lastChosen = chosen;
    }
    if (chosen === false) {
      throw new ServiceError(
        'NotAcceptable',
        `None of the types in Accept '${accept}' can be written. Supported: ${this.writers.map((r) => r.type.mimeType).join(', ')}`,
      );
    }
    return chosen;
  }

  /**
   * Whether an Accept value names a type we write by itself, rather than reaching one only
   * through wildcards (curl's `*\/*`, a browser's `text/html,...,*\/*;q=0.8`).
   */
  namesWritableType(accept: string | undefined): boolean {
    if (accept === undefined) return false;
    return parseAccept(accept).some((r) => r.q > 0 && !r.type.includes('*') && this.byBinding.get(r.type)?.type.write !== undefined);
  }

  /** The content type that reads the request body, from the Content-Type header (none: JSON). */
  forContentType(header: string | undefined): Negotiated {
    if (header === undefined || header.trim() === '') return { contentType: this.defaultType, params: {} };
    const range = parseMediaType(header);
    const type = range && this.byBinding.get(range.type)?.type;
    if (!range || !type || type.read === undefined) {
      const readable = this.types.filter((r) => r.type.read !== undefined).map((r) => r.type.mimeType);
      const hint = range && SPREADSHEET_HINTS[range.type] ? ` ${SPREADSHEET_HINTS[range.type]}` : '';
      throw new ServiceError(
        'UnsupportedContent',
        `Cannot read a body of Content-Type '${header}'.${hint} Readable: ${readable.join(', ')}`,
      );
    }
    return { contentType: type, params: range.params };
  }

  /** Entities of Service.Admin.Protocol (docs/content-types.md). */
  entities(): Entity[] {
    return this.providers.map((p, i) => ({
      Name: p.name,
      Identifier: p.identifier,
      IsDefault: i === 0,
      ContentTypes: p.contentTypes.map((t) => ({
        Name: t.name,
        MimeType: t.mimeType,
        CanRead: t.read !== undefined,
        CanWrite: t.write !== undefined,
        Bindings: listedBindings(t),
      })),
    }));
  }
}

/** The bindings as declared, led by the MIME type when the declaration leaves it out (it binds too). */
function listedBindings(type: ContentType): string[] {
  const declared = type.bindings.map((b) => b.toLowerCase());
  return declared.includes(type.mimeType.toLowerCase()) ? [...type.bindings] : [type.mimeType, ...type.bindings];
}
