/**
 * A date literal compared in SQL exactly as the core compares it (core grammar/literal.ts
 * isoTime, conditions.ts): a string of the ISO_DATE shape (at most 35 characters) that
 * `Date.parse` reads compares by time, any other string by text.
 *
 * The time is computed from the string's fields with integer arithmetic, never with
 * PostgreSQL's own timestamp parser, because V8's parser has rules of its own that this
 * reproduces (checked against the core by sql/test/date-suite.ts):
 * - `YYYY-MM-DD` and `YYYY-MM-DDT...` with month 01-12 and day 01-31 are ES5 dates: the
 *   day rolls over (Feb 30 is Mar 1), date-only is UTC, a time without offset is local,
 *   hours 00-24 (24 only as 24:00:00 with a zero fraction), offsets `+hh:mm`/`+hhmm` with
 *   hh <= 23, mm <= 59.
 * - Anything else (a space before the time, month or day out of range) goes to the legacy
 *   parser: a `T` there is NaN; years 1-31 make the fields month-day-year; years 0-49 and
 *   50-99 become 2000-2049 and 1950-1999; no offset is local time, even date-only; an
 *   offset's hours are not checked (`+9999` is 99 h 99 min) nor, without a colon, its minutes.
 * - Fractions keep three digits, truncated, out of the first nine after leading zeros.
 *
 * Local time is the process's time zone: when it has one offset at every date (UTC, a
 * fixed Etc/GMT zone) SQL subtracts it and the test is exact. Otherwise (a zone with
 * daylight saving or history) local times within two days of the literal are kept for the
 * service to judge (no zone is ever 48 hours off UTC), and the test is a superset.
 */

/** The literal's ISO_DATE shape (core grammar/literal.ts), for PostgreSQL's regex syntax. */
const ISO_DATE = `'^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?(Z|[-+][0-9]{2}:?[0-9]{2})?)?$'`;
/** `Date.prototype.toISOString` output with fields in range (the day is checked apart). */
const CANONICAL = `'^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9][.][0-9]{3}Z$'`;
/** The same shape with its fields captured. */
const PARTS = `'^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:([T ])([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:[.]([0-9]+))?)?(Z|([-+])([0-9]{2})(:?)([0-9]{2}))?)?$'`;

const DAY_MS = 86_400_000;
/** Farther than any zone's offset from UTC: a local time this far from the literal compares the same in every zone. */
const BAND_MS = 2 * DAY_MS;

/** Zones with one offset at every date, as ICU names them. */
const FIXED_ZONE = /^(?:Etc\/)?(?:UTC|UCT|GMT|GMT[+-]?0|Universal|Zulu|Greenwich)$|^Etc\/GMT[+-]\d{1,2}$/;
/** Years 0, 1900, 1970, 2024 and 9999: a fixed zone must give them all one offset. */
const SAMPLES = [-62167219200000, -2208988800000, 0, 1704067200000, 253402300799999];

/** The process's offset from UTC in milliseconds when it is the same at every date, else null. */
function fixedLocalOffset(): number | null {
  const zone = new Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (zone === undefined || !FIXED_ZONE.test(zone)) return null;
  const offsets = SAMPLES.map((t) => new Date(t).getTimezoneOffset());
  return offsets.every((o) => o === offsets[0]) ? -offsets[0] * 60_000 : null;
}

/**
 * `s sqlOp literal` for a string `s` (text COLLATE "C"), as the core's date comparison.
 * `add` makes a bind parameter of a value. Exact unless the process's zone has no fixed offset.
 */
export function dateTest(
  s: string,
  sqlOp: string,
  text: string,
  time: number,
  add: (value: string) => string,
): { sql: string; exact: boolean } {
  const offset = fixedLocalOffset();
  const literal = `(${add(String(time))})::bigint`;
  const textParam = add(text);
  const byText = `v.s COLLATE "C" ${sqlOp} ${textParam}`;
  let byTime: string;
  if (offset !== null) {
    byTime = `WHEN v.t IS NOT NULL THEN v.t - CASE WHEN v.local THEN (${add(String(offset))})::bigint ELSE 0 END ${sqlOp} ${literal}`;
  } else {
    // Local times near the literal could fall on either side of it: kept (TRUE).
    const { below, above } = sides(sqlOp);
    byTime =
      `WHEN v.t IS NULL THEN ${byText} WHEN NOT v.local THEN v.t ${sqlOp} ${literal} ` +
      `WHEN v.t < ${literal} - ${BAND_MS} THEN ${below} WHEN v.t > ${literal} + ${BAND_MS} THEN ${above} ELSE TRUE`;
  }
  const general = offset !== null ? `CASE ${byTime} ELSE ${byText} END` : `CASE ${byTime} END`;
  // Cheap tests first: far from the literal (farTests), no ISO shape (text), canonical UTC
  // times (their text order is their time order).
  const branches = [
    ...farTests(s, sqlOp, text, time, add),
    `WHEN NOT (${s} ~ ${ISO_DATE} AND length(${s}) <= 35) THEN ${s} ${sqlOp} ${textParam}`,
  ];
  const year = new Date(time).getUTCFullYear();
  if (year >= 0 && year <= 9999)
    branches.push(`WHEN ${s} ~ ${CANONICAL} AND ${realDay(s)} THEN ${s} ${sqlOp} ${add(new Date(time).toISOString())}`);
  return { sql: `CASE ${branches.join(' ')} ELSE (SELECT ${general} FROM ${isoTimeOf(s)} v) END`, exact: offset !== null };
}

/** What the comparison gives for a value below the literal, and for one above it. */
function sides(sqlOp: string): { below: boolean; above: boolean } {
  return { below: sqlOp === '<' || sqlOp === '<=' || sqlOp === '<>', above: sqlOp === '>' || sqlOp === '>=' || sqlOp === '<>' };
}

/**
 * Farther than any spelling moves a date's time from its written day: a rolled-over day
 * (+3 days), 24:00 (+1), a legacy offset up to +-99:99 (4.2 days), a local zone (< 2 days).
 */
const FAR_MS = 12 * DAY_MS;

/**
 * Strings whose first ten characters come before (or after) both the day FAR_MS before
 * (after) the literal and the literal's own first ten: below (above) the literal whether
 * they compare by text (no ISO date, or one Date.parse refuses) or by time, when they are
 * an ISO date of year 100 or later with month and day in range (the legacy parser reads
 * those as written too). Most rows of a table are decided so, with no regular expression
 * and no time computed.
 */
function farTests(s: string, sqlOp: string, text: string, time: number, add: (value: string) => string): string[] {
  const [from, to] = [time - FAR_MS, time + FAR_MS].map((t) => new Date(t));
  if (from.getUTCFullYear() < 100 || to.getUTCFullYear() > 9999) return [];
  const day = text.slice(0, 10);
  const lo = add([from.toISOString().slice(0, 10), day].sort()[0]);
  const hi = add([to.toISOString().slice(0, 10), day].sort()[1]);
  const written = `substr(${s}, 1, 10)`;
  const plain = `substr(${s}, 1, 4) >= '0100' AND substr(${s}, 6, 2) BETWEEN '01' AND '12' AND substr(${s}, 9, 2) BETWEEN '01' AND '31'`;
  const { below, above } = sides(sqlOp);
  const result = below === above ? String(below) : below ? `${written} < ${lo}` : `${written} > ${hi}`;
  return [`WHEN ${written} NOT BETWEEN ${lo} AND ${hi} AND ${plain} THEN ${result}`];
}

/** Whether a canonical timestamp's day exists in its month (CASE keeps the casts after the regex). */
function realDay(s: string): string {
  const month = `substr(${s}, 6, 2)`;
  const day = `substr(${s}, 9, 2)`;
  const year = `substr(${s}, 1, 4)::int`;
  return (
    `CASE WHEN ${day} <= '28' THEN TRUE WHEN ${month} <> '02' THEN ${day} <= '30' OR ${month} IN ('01','03','05','07','08','10','12') ` +
    `ELSE ${day} = '29' AND (${year} % 4 = 0 AND (${year} % 100 <> 0 OR ${year} % 400 = 0)) END`
  );
}

/**
 * A one-row relation with `s` (the string), `t` (its time in ms as Date.parse reads it,
 * local times as if they were UTC; NULL when it is no ISO date or Date.parse gives NaN)
 * and `local` (whether `t` is a local time).
 */
function isoTimeOf(s: string): string {
  const m = `(SELECT ${s} AS s, CASE WHEN length(${s}) <= 35 THEN regexp_match(${s}, ${PARTS}) END AS m OFFSET 0) m`;
  const fields =
    `(SELECT m.s, m.m IS NOT NULL AS iso, m.m[1]::int AS y, m.m[2]::int AS mo, m.m[3]::int AS d, m.m[4] AS sep, ` +
    `m.m[5]::int AS h, m.m[6]::int AS mi, coalesce(m.m[7]::int, 0) AS sec, length(m.m[8]) AS flen, ` +
    `coalesce(nullif(left(ltrim(m.m[8], '0'), 9), '')::int, 0) AS n, m.m[9] AS z, m.m[10] AS sign, m.m[11]::int AS th, m.m[12] AS colon, m.m[13]::int AS tm FROM ${m}) f`;
  // ES5 when month and day are in range and no space; the legacy parser otherwise.
  const es5 = `(f.sep IS DISTINCT FROM ' ' AND f.mo BETWEEN 1 AND 12 AND f.d BETWEEN 1 AND 31)`;
  const mdy = `(NOT ${es5} AND f.y BETWEEN 1 AND 31)`;
  const year = `CASE WHEN ${mdy} THEN f.d ELSE f.y END`;
  const ms = `CASE WHEN f.flen IS NULL THEN 0 WHEN f.flen = 1 THEN f.n * 100 WHEN f.flen = 2 THEN f.n * 10 WHEN f.flen = 3 THEN f.n ELSE f.n / (10 ^ (least(f.flen, 9) - 3))::int END`;
  const e =
    `(SELECT f.s, f.iso, ${es5} AS es5, f.sep, f.h, f.mi, f.sec, f.n, ${ms} AS ms, f.z, f.sign, f.th, f.colon, f.tm, ` +
    `CASE WHEN ${mdy} THEN f.y ELSE f.mo END AS mo, CASE WHEN ${mdy} THEN f.mo ELSE f.d END AS d, ` +
    `CASE WHEN ${es5} THEN f.y WHEN ${year} < 50 THEN ${year} + 2000 WHEN ${year} < 100 THEN ${year} + 1900 ELSE ${year} END AS y FROM ${fields}) e`;
  const valid =
    `e.iso AND NOT (NOT e.es5 AND e.sep IS NOT DISTINCT FROM 'T') AND e.mo BETWEEN 1 AND 12 AND e.d BETWEEN 1 AND 31 ` +
    `AND (e.h IS NULL OR (e.h <= 23 AND e.mi <= 59 AND e.sec <= 59) OR (e.h = 24 AND e.mi = 0 AND e.sec = 0 AND CASE WHEN e.es5 THEN e.n = 0 ELSE e.ms = 0 END)) ` +
    `AND (e.sign IS NULL OR CASE WHEN e.es5 THEN e.th <= 23 AND e.tm <= 59 ELSE e.colon = '' OR e.tm <= 59 END)`;
  // Days since 1970-01-01 of the month's first day (days_from_civil, years shifted by 400 to stay positive).
  const yy = `(e.y - CASE WHEN e.mo <= 2 THEN 1 ELSE 0 END + 400)`;
  const yoe = `(${yy} % 400)`;
  const doy = `((153 * ((e.mo + 9) % 12) + 2) / 5)`;
  const days = `((${yy} / 400) * 146097 + ${yoe} * 365 + ${yoe} / 4 - ${yoe} / 100 + ${doy} - 719468 - 146097 + e.d - 1)`;
  const offsetMinutes = `CASE WHEN e.sign IS NULL THEN 0 ELSE CASE WHEN e.sign = '-' THEN -1 ELSE 1 END * (e.th * 60 + e.tm) END`;
  const time =
    `${days}::bigint * ${DAY_MS} + coalesce(e.h, 0)::bigint * 3600000 + coalesce(e.mi, 0) * 60000 + e.sec * 1000 + e.ms ` +
    `- (${offsetMinutes})::bigint * 60000`;
  return `(SELECT e.s, CASE WHEN ${valid} THEN ${time} END AS t, ` + `e.z IS NULL AND NOT (e.es5 AND e.sep IS NULL) AS local FROM ${e})`;
}
