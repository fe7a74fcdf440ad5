import { ServiceError } from './errors.js';
import type { ContentType, ProtocolProvider } from './content-types/content-type.js';
import { json } from './content-types/json.js';
import { parseAccept, parseMediaType } from './content-types/negotiation.js';
import type { Entity } from './query/conditions.js';

export interface Negotiated {
  contentType: ContentType;
  params: Record<string, string>;
}

/** The default protocol of SPEC 2.2. */
export const DEFAULT_PROTOCOL: ProtocolProvider = { name: 'Service', identifier: 'service', contentTypes: [json] };

/** Registered protocol providers and content negotiation by binding. */
export class Protocols {
  private readonly providers: ProtocolProvider[] = [];
  private readonly byBinding = new Map<string, ContentType>();

  constructor(defaultProtocol: ProtocolProvider = DEFAULT_PROTOCOL) {
    this.add(defaultProtocol);
  }

  get defaultType(): ContentType {
    return this.providers[0].contentTypes[0];
  }

  add(provider: ProtocolProvider): void {
    if (this.providers.some((p) => p.identifier.toLowerCase() === provider.identifier.toLowerCase())) {
      throw new Error(`A protocol with identifier '${provider.identifier}' is already registered`);
    }
    this.providers.push(provider);
    for (const type of provider.contentTypes) {
      for (const b of [type.mimeType, ...type.bindings]) {
        const key = b.toLowerCase();
        if (!this.byBinding.has(key)) this.byBinding.set(key, type);
      }
    }
  }

  /** The content type that writes the response, from the Accept header. */
  forAccept(accept: string | undefined): Negotiated {
    if (accept === undefined || accept.trim() === '') return { contentType: this.defaultType, params: {} };
    for (const range of parseAccept(accept)) {
      const type = this.match(range.type, (t) => t.write !== undefined);
      if (type) return { contentType: type, params: range.params };
    }
    throw new ServiceError('NotAcceptable', `None of the types in Accept '${accept}' can be written. Supported: ${this.writable().join(', ')}`);
  }

  /** The content type that reads the request body, from the Content-Type header. */
  forContentType(header: string | undefined): Negotiated {
    if (header === undefined || header.trim() === '') return { contentType: this.defaultType, params: {} };
    const range = parseMediaType(header);
    const type = this.byBinding.get(range.type);
    if (!type || type.read === undefined) {
      throw new ServiceError('UnsupportedContent', `Cannot read a body of Content-Type '${header}'. Readable: ${this.readable().join(', ')}`);
    }
    return { contentType: type, params: range.params };
  }

  private match(type: string, ok: (t: ContentType) => boolean): ContentType | undefined {
    if (type === '*/*' || type === '*') return this.defaultType;
    if (type.endsWith('/*')) {
      const prefix = type.slice(0, -1);
      return this.all().find((t) => ok(t) && t.mimeType.toLowerCase().startsWith(prefix));
    }
    const found = this.byBinding.get(type);
    return found && ok(found) ? found : undefined;
  }

  private all(): ContentType[] {
    return this.providers.flatMap((p) => p.contentTypes);
  }

  private writable(): string[] {
    return this.all().filter((t) => t.write).map((t) => t.mimeType);
  }

  private readable(): string[] {
    return this.all().filter((t) => t.read).map((t) => t.mimeType);
  }

  /** Entities of Service.Admin.Protocol. */
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
        Bindings: t.bindings,
      })),
    }));
  }
}
