// Suggested questions for a dataset, written from its profile alone (no model call):
// counts per low-cardinality text column, totals of a measure per month of a date
// column or per category. The same profile always gives the same questions.
//
// A measure is a number people add up: never an identifier, key, code, serial, zip or
// year, known by its name or by its values (a run of distinct consecutive integers is
// a serial; integers all within 1900-2100 are years). A category is never mostly null.

const MAX_SUGGESTIONS = 4;
const MAX_CATEGORIES = 25;
const MAX_NULL_FRACTION = 0.5;
const NUMERIC = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|FLOAT|DOUBLE|REAL|DECIMAL)/i;
const INTEGER = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT)/i;
const TEXT = /^(VARCHAR|TEXT|STRING|ENUM)/i;
const TEMPORAL = /^(DATE|TIMESTAMP)/i;
// Keys and codes are numbers nobody adds up (names as the import makes them: lower case,
// words joined by "_"; "customerid" as a database names it too).
const IDENTIFIER = /(^|_)(id|ids|key|code|serial|serial_no|zip|zipcode|zip_code|postcode|postal_code|plz|year|yr|month|day|hour|no|nr|number|num|phone|ean|isbn|sku)(_|$)|[a-z](id|key|code|serial|zip)$/i;
// Ordinary words that end like an identifier and may well be amounts.
const NOT_IDENTIFIER = /(paid|valid|fluid|liquid|solid|acid|rapid|hybrid|bid|grid|mid|void|turnkey|barcode)$/i;
const YEARS = [1900, 2100];

function identifierByName(col) {
  return IDENTIFIER.test(col.name) && !NOT_IDENTIFIER.test(col.name);
}

function identifierByValues(col) {
  if (!INTEGER.test(col.type || "") || typeof col.min !== "number" || typeof col.max !== "number") return false;
  if (col.min >= YEARS[0] && col.max <= YEARS[1]) return true;
  // 1, 2, 3, ... n: every value distinct and none missing from the run.
  return col.distinct > 2 && col.max - col.min + 1 === col.distinct;
}

function isCategory(col) {
  return TEXT.test(col.type || "") && col.distinct >= 2 && col.distinct <= MAX_CATEGORIES
    && (col.null_fraction || 0) <= MAX_NULL_FRACTION;
}

function isMeasure(col) {
  return NUMERIC.test(col.type || "") && !identifierByName(col) && !identifierByValues(col)
    && (col.distinct || 0) > 2;
}

/** Up to four questions about `dataset.tables` (as `GET /v1/datasets/{id}` shows them). */
export function suggestQuestions(dataset) {
  const out = [];
  const tables = [...(dataset.tables || [])].sort((a, b) => (b.rows || 0) - (a.rows || 0));
  for (const table of tables) {
    const cols = table.columns || [];
    const category = cols.find(isCategory);
    const measure = cols.find(isMeasure);
    const date = cols.find((c) => TEMPORAL.test(c.type || ""));
    if (category) out.push(`How many ${table.name} are there per ${category.name}?`);
    if (measure && date) out.push(`What is the total ${measure.name} of ${table.name} per month?`);
    if (measure && category) out.push(`What is the average ${measure.name} per ${category.name}?`);
    if (!category && !measure) out.push(`How many ${table.name} are there?`);
  }
  return [...new Set(out)].slice(0, MAX_SUGGESTIONS);
}

/** A column's profile in a few words: nulls, distinct values, top values or range. */
export function columnSummary(col) {
  const parts = [];
  if (col.null_fraction) parts.push(`${(col.null_fraction * 100).toFixed(1)}% null`);
  if (col.distinct !== null && col.distinct !== undefined) parts.push(`${Number(col.distinct).toLocaleString()} distinct`);
  const top = (col.top_values || []).slice(0, 5).map((t) => (t && typeof t === "object" ? t.value : t));
  if (top.length && (TEXT.test(col.type || "") || col.type === "BOOLEAN")) parts.push(`e.g. ${top.join(", ")}`);
  else if (col.min !== null && col.min !== undefined) parts.push(`${col.min} … ${col.max}`);
  return parts.join(" · ");
}
