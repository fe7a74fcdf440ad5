import { createHash } from 'node:crypto';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * `table` or `schema.table`, each part a plain identifier (letters, digits, `_`, at most
 * 63 characters), quoted so that its case is kept. Checked once, when the storage is
 * created: a table name never comes from a request.
 */
export function quoteTableName(name: string): string {
  const parts = name.split('.');
  if (parts.length > 2 || !parts.every((p) => IDENTIFIER.test(p))) {
    throw new Error(`Invalid table name '${name}': use letters, digits and '_' (at most 63), optionally prefixed by 'schema.'`);
  }
  return parts.map((p) => `"${p}"`).join('.');
}

/**
 * A table name for a resource: `Service.Admin.Macro` -> `resourcery_service_admin_macro`.
 * Names beyond PostgreSQL's 63 characters are shortened, keeping a hash of the whole.
 */
export function tableNameFor(resourceName: string, prefix = 'resourcery_'): string {
  let name = (prefix + resourceName).toLowerCase().replace(/[^a-z0-9_]+/g, '_');
  if (name.length > 63)
    name = `${name.slice(0, 54)}_${createHash('sha256')
      .update(prefix + resourceName)
      .digest('hex')
      .slice(0, 8)}`;
  quoteTableName(name);
  return name;
}
