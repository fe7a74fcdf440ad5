/** decodeURIComponent, or the text as written when its percent-encoding is malformed (messages, redaction). */
export function decodeLoose(text: string): string {
  // Without a `%` there is nothing to decode: the text itself, without decodeURIComponent's copy.
  if (text.indexOf('%') < 0) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
