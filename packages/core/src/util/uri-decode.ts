/** decodeURIComponent, or the text as written when its percent-encoding is malformed (messages, redaction). */
export function decodeLoose(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
