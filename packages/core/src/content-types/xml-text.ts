/** The little of XML that reading SpreadsheetML needs: attributes, text and escapes. */

const ENTITY = /&(?:(amp|lt|gt|quot|apos)|#(\d+)|#x([0-9a-fA-F]+));/g;
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
/** OOXML's escape for characters XML cannot hold (ST_Xstring): `_x000D_`. */
const OOXML_ESCAPE = /_x([0-9A-Fa-f]{4})_/g;

/** Element text or an attribute value, unescaped exactly once. */
export function unescapeXml(text: string): string {
  if (text.indexOf('&') < 0) return text;
  return text.replace(ENTITY, (_, name: string | undefined, dec: string | undefined, hex: string | undefined) => {
    if (name) return NAMED[name];
    const code = dec !== undefined ? Number(dec) : parseInt(hex!, 16);
    return code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd';
  });
}

/** A string cell's text: XML escapes, then OOXML's `_xHHHH_` escapes. */
export function cellText(raw: string): string {
  const text = unescapeXml(raw);
  return text.indexOf('_x') < 0 ? text : text.replace(OOXML_ESCAPE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** What a writer must do so that cellText gives `text` back: escape `_xHHHH_` look-alikes and control characters. */
export function escapeCellText(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/_x(?=[0-9A-Fa-f]{4}_)|[\x00-\x08\x0b-\x1f\ufffe\uffff]/g, (m) =>
    m === '_x' ? '_x005F_x' : `_x${m.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}_`,
  );
}

const ATTRIBUTE = /([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

/** Attributes by local name (prefixes dropped: `r:id` is `id`), values unescaped. */
export function attributes(tag: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const m of tag.matchAll(ATTRIBUTE)) {
    const colon = m[1].indexOf(':');
    out[colon < 0 ? m[1] : m[1].slice(colon + 1)] = unescapeXml(m[2] ?? m[3]);
  }
  return out;
}

/** Every element `name` (any namespace prefix): its attribute text and its content (null when self-closing). */
export function* elements(xml: string, name: string): Generator<{ attrs: string; content: string | null }> {
  const pattern = new RegExp(`<(?:[\\w.-]+:)?${name}(?=[\\s/>])([^>]*?)(?:/>|>([\\s\\S]*?)</(?:[\\w.-]+:)?${name}>)`, 'g');
  for (const m of xml.matchAll(pattern)) yield { attrs: m[1], content: m[2] ?? null };
}

/** The concatenated text of every `<t>` in a string item (`<si>`, `<is>`), phonetic runs (`<rPh>`) left out. */
export function runText(content: string): string {
  let text = '';
  const plain = content.indexOf('rPh') < 0 ? content : content.replace(/<(?:[\w.-]+:)?rPh\b[\s\S]*?<\/(?:[\w.-]+:)?rPh>/g, '');
  for (const t of elements(plain, 't')) text += t.content === null ? '' : cellText(t.content);
  return text;
}
