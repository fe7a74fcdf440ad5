/** A database URL as printed (banner, messages, hints): the password hidden, since output ends up in logs. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}
