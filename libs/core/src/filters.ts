// Compiles the trace-log "shared filter object" into a parameterized WHERE fragment over `spans`.
// Only identifiers from CATALOG (and constants of this module) are written into the SQL text; every
// user-supplied string (value, map key, score name, annotation id) travels as a `$n` parameter.
// Every placeholder carries an explicit cast, so the driver needs no type inference. Array parameters
// are sent as PostgreSQL array literals (strings), which every postgres.js configuration passes through.
import { parseTimestamp } from './timestamps';

export const FILTER_OPERATORS = [
  'equals',
  'not_equals',
  'like',
  'greater_than_or_equal',
  'less_than_or_equal',
  'greater_than',
  'less_than',
  'is_null',
  'exists',
  'in',
  'between',
] as const;
type FilterOperator = (typeof FILTER_OPERATORS)[number];

export type FilterInput = {
  filter_field?: string | null;
  filter_key?: string | null;
  filter_operator?: string | null;
  filter_value?: string | null;
};

export class FilterError extends Error {
  constructor(
    readonly field: 'filter_field' | 'filter_key' | 'filter_operator' | 'filter_value',
    message: string,
    /** Which of a list of filters (a listing's `filters`) it is; none for the single filter. */
    readonly index?: number,
  ) {
    super(message);
    this.name = 'FilterError';
  }
}

export type CompiledFilter = { text: string; params: unknown[] };

const ALL: readonly FilterOperator[] = FILTER_OPERATORS;
const NO_LIKE = ALL.filter((o) => o !== 'like');
const EQUALITY: readonly FilterOperator[] = ['equals', 'not_equals', 'in', 'is_null', 'exists'];
const ORDERING: readonly FilterOperator[] = [
  'greater_than_or_equal',
  'less_than_or_equal',
  'greater_than',
  'less_than',
  'between',
];
const SQL_OPS: Partial<Record<FilterOperator, string>> = {
  equals: '=',
  not_equals: 'IS DISTINCT FROM', // not_equals also matches NULL: "status != error" keeps rows without status
  greater_than_or_equal: '>=',
  less_than_or_equal: '<=',
  greater_than: '>',
  less_than: '<',
};

// ---- value types ------------------------------------------------------------------------------

type Scalar = { name: string; cast: string; ops: readonly FilterOperator[]; parse(s: string): unknown };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DECIMAL = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const INT_MIN = -(2n ** 63n),
  INT_MAX = 2n ** 63n - 1n;

function parseNumber(s: string): string | undefined {
  const t = s.trim();
  // Number() would also accept '', hex, 'Infinity'; the regex admits plain decimals only.
  // Number() also bounds the value: anything it cannot hold as a finite double is refused, and what it
  // gives back (e.g. 1e-20000 -> 0) always fits PostgreSQL's numeric.
  return DECIMAL.test(t) && Number.isFinite(Number(t)) ? String(Number(t)) : undefined;
}

function parseInteger(s: string): string | undefined {
  const t = s.trim();
  if (!/^[-+]?\d+$/.test(t)) return undefined;
  const n = BigInt(t);
  return n >= INT_MIN && n <= INT_MAX ? n.toString() : undefined;
}

const TEXT: Scalar = { name: 'text', cast: 'text', ops: ALL, parse: (s) => s };
const NUMBER: Scalar = { name: 'number', cast: 'numeric', ops: NO_LIKE, parse: parseNumber };
const SCALARS = {
  uuid: {
    name: 'UUID',
    cast: 'uuid',
    ops: EQUALITY,
    parse: (s) => (UUID.test(s.trim()) ? s.trim().toLowerCase() : undefined),
  },
  text: TEXT,
  integer: { name: 'integer', cast: 'bigint', ops: NO_LIKE, parse: parseInteger },
  number: NUMBER,
  boolean: {
    name: 'boolean',
    cast: 'boolean',
    ops: ['equals', 'not_equals', 'is_null', 'exists'],
    parse: (s) =>
      (({ true: true, '1': true, false: false, '0': false }) as Record<string, boolean>)[s.trim().toLowerCase()],
  },
  timestamp: { name: 'timestamp', cast: 'timestamptz', ops: NO_LIKE, parse: (s) => parseTimestamp(s)?.iso },
} satisfies Record<string, Scalar>;

type Kind = keyof typeof SCALARS | 'tags' | 'map';

// ---- field catalog ----------------------------------------------------------------------------

const group = (kind: Kind, names: string) => names.split(' ').map((n): [string, [string, Kind]] => [n, [n, kind]]);

/** wire name -> [column, kind]. The only source of identifiers in the generated SQL. */
const CATALOG = new Map<string, [column: string, kind: Kind]>([
  ...group('uuid', 'trace_id root_trace_id parent_trace_id experiment_uuid'),
  ...group(
    'text',
    'trace_name output target status error output_for_eval_metrics deployment_id end_user_identifier session_id',
  ),
  ...group('integer', 'depth execution_order input_tokens output_tokens total_tokens'),
  ...group('number', 'time_to_first_token latency cost feedback_score apply_eval_frac log_sample_rate'),
  ...group('boolean', 'cache_hit'),
  ...group('tags', 'tags'),
  ...group('map', 'metadata inputs configuration'),
  ['start_timestamp', ['start_ts', 'timestamp']],
  ['end_timestamp', ['end_ts', 'timestamp']],
]);

/** annotation_type -> attribute of a user's annotation, with how it compares. */
const ANNOTATION_ATTRS = new Map<string, Scalar>([
  ['score', NUMBER],
  ['value', TEXT],
  ['annotation_name', TEXT],
  ['user_id', TEXT],
]);

// ---- compilation context ----------------------------------------------------------------------

const stripNul = (s: string | null | undefined) => (s == null ? undefined : s.replace(/\0/g, ''));
/** An ILIKE pattern matching any text that contains `s` literally. */
export const containsPattern = (s: string) => `%${s.replace(/[\\%_]/g, '\\$&')}%`;
const arrayLiteral = (xs: unknown[]) => `{${xs.map((x) => `"${String(x).replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;

class Ctx {
  readonly params: unknown[] = [];
  constructor(
    private readonly first: number,
    readonly op: FilterOperator,
    private readonly raw: string | undefined,
  ) {}

  bind(value: unknown, cast: string): string {
    this.params.push(cast.endsWith('[]') ? arrayLiteral(value as unknown[]) : value);
    return `$${this.first + this.params.length - 1}::${cast}`;
  }

  value(): string {
    if (!this.raw) throw new FilterError('filter_value', `operator ${this.op} requires a filter_value`);
    return this.raw;
  }

  /** The raw operands of the operator: the comma-separated items of `in`, the two bounds of `between`, else the value. */
  operands(): string[] {
    if (this.op !== 'in' && this.op !== 'between') return [this.value()];
    const items = this.value()
      .split(',')
      .map((s) => s.trim());
    if (this.op === 'in' && items.some(Boolean)) return items.filter(Boolean);
    if (this.op === 'between' && items.length === 2 && items.every(Boolean)) return items;
    throw new FilterError(
      'filter_value',
      this.op === 'in'
        ? 'operator in requires a comma-separated list of values'
        : 'operator between requires two comma-separated bounds',
    );
  }

  typed(t: Scalar, s: string): unknown {
    const v = t.parse(s);
    if (v === undefined) throw new FilterError('filter_value', `filter_value must be a valid ${t.name}`);
    return v;
  }
}

/** `e <op> value` for a scalar SQL expression `e` of type `t`. */
function compare(c: Ctx, e: string, t: Scalar): string {
  const { op } = c;
  if (op === 'is_null' || op === 'exists') return `${e} IS ${op === 'exists' ? 'NOT ' : ''}NULL`;
  if (op === 'like') return `${e} ILIKE ${c.bind(containsPattern(c.value()), 'text')}`;
  const values = c.operands().map((s) => c.typed(t, s));
  if (op === 'in') return `${e} = ANY(${c.bind(values, `${t.cast}[]`)})`;
  const [a, b] = values.map((v) => c.bind(v, t.cast));
  return op === 'between' ? `${e} BETWEEN ${a} AND ${b}` : `${e} ${SQL_OPS[op]} ${a}`;
}

// Casting a stored JSON value that does not look like a bounded decimal yields NULL (no match) instead of
// an error. The bounds keep it within what `numeric` can hold.
const asNumeric = (e: string) =>
  `(CASE WHEN ${e} ~ '^[-+]?([0-9]{1,100}([.][0-9]{0,100})?|[.][0-9]{1,100})([eE][-+]?[0-9]{1,4})?$' THEN (${e})::numeric END)`;
// jsonb_array_elements / jsonb_each raise on the wrong JSON type; feed them NULL instead.
const ifType = (e: string, type: 'array' | 'object') => `CASE WHEN jsonb_typeof(${e}) = '${type}' THEN ${e} END`;

// ---- per-kind compilers -----------------------------------------------------------------------

type Target = { ops: readonly FilterOperator[]; compile(c: Ctx): string };

function tagsTarget(col: string): Target {
  return {
    ops: ['equals', 'not_equals', 'like', 'in', 'is_null', 'exists'],
    compile(c) {
      switch (c.op) {
        case 'equals':
          return `${col} @> ARRAY[${c.bind(c.value(), 'text')}]`;
        case 'not_equals':
          return `(${col} IS NULL OR NOT ${col} @> ARRAY[${c.bind(c.value(), 'text')}])`;
        case 'like':
          return `EXISTS (SELECT 1 FROM unnest(${col}) AS tag WHERE ${compare(c, 'tag', TEXT)})`;
        case 'in':
          return `${col} && ${c.bind(c.operands(), 'text[]')}`;
        case 'is_null':
          return `coalesce(cardinality(${col}), 0) = 0`;
        default:
          return `cardinality(${col}) > 0`;
      }
    },
  };
}

function mapTarget(col: string, key: string | undefined): Target {
  return {
    ops: ALL,
    compile(c) {
      if (!key) throw new FilterError('filter_key', 'filter_key is required for this field');
      if (c.op === 'equals') return mapEquals(c, col, key);
      const e = `(${col} ->> ${c.bind(key, 'text')})`;
      // Ordering is numeric when the filter value is; a non-numeric filter value compares as text.
      const numeric = ORDERING.includes(c.op) && c.operands().every((s) => parseNumber(s) !== undefined);
      return numeric ? compare(c, asNumeric(e), NUMBER) : compare(c, e, TEXT);
    },
  };
}

/**
 * Map equality as JSON containment, so that the GIN index on metadata serves it. The value may be stored
 * as a JSON string, number or boolean; each reading that fits the filter value is tried.
 */
function mapEquals(c: Ctx, col: string, key: string): string {
  const raw = c.value();
  const k = c.bind(key, 'text');
  const readings = [`${col} @> jsonb_build_object(${k}, ${c.bind(raw, 'text')})`];
  const number = parseNumber(raw);
  if (number !== undefined) readings.push(`${col} @> jsonb_build_object(${k}, ${c.bind(number, 'numeric')})`);
  if (raw === 'true' || raw === 'false') readings.push(`${col} @> jsonb_build_object(${k}, ${c.bind(raw, 'boolean')})`);
  return readings.join(' OR ');
}

/** Matches when some element of a collection (JSON or table) satisfies `cond`; is_null / exists test for any element at all. */
function anyElement(c: Ctx, from: string, where: string[], cond: () => string): string {
  if (c.op === 'is_null' || c.op === 'exists') {
    return `${c.op === 'is_null' ? 'NOT ' : ''}EXISTS (SELECT 1 FROM ${from}${where.length ? ` WHERE ${where.join(' AND ')}` : ''})`;
  }
  return `EXISTS (SELECT 1 FROM ${from} WHERE ${[...where, cond()].join(' AND ')})`;
}

/**
 * A score filter reads span_scores (a row per score of each span, kept equal to `scores` by triggers; see
 * migration 00011) through its (organization, name, score) index: unnesting every root's `scores` JSON
 * took about 800 ms over 200k roots. Written as EXISTS, so that the planner may either hash the matching
 * scores (a count) or test roots newest first (a page).
 */
function scoreTarget(alias: string, name: string): Target {
  return {
    ops: NO_LIKE,
    compile(c) {
      const where = [
        `sc.organization_id = ${alias}.organization_id`,
        `sc.trace_id = ${alias}.trace_id`,
        `sc.name = ${c.bind(name, 'text')}`,
      ];
      return anyElement(c, 'span_scores sc', where, () => compare(c, 'sc.score', NUMBER));
    },
  };
}

function annotationTarget(alias: string, attr: string, t: Scalar, criterion: string): Target {
  return {
    ops: t.ops,
    compile(c) {
      const byUser = `${alias}.annotations -> ${c.bind(criterion, 'text')}`;
      const e = `(entry.value ->> '${attr}')`; // attr comes from ANNOTATION_ATTRS, never from input
      return anyElement(c, `jsonb_each(${ifType(byUser, 'object')}) AS entry`, [], () =>
        compare(c, t === NUMBER ? asNumeric(e) : e, t),
      );
    },
  };
}

function resolve(field: string, key: string | undefined, alias: string): Target {
  const entry = CATALOG.get(field);
  if (entry) {
    const [column, kind] = entry;
    const col = `${alias}.${column}`;
    if (kind === 'tags') return tagsTarget(col);
    if (kind === 'map') return mapTarget(col, key);
    const t = SCALARS[kind];
    return { ops: t.ops, compile: (c) => compare(c, col, t) };
  }
  // score:{name} and annotation:{type}:{id}; the name and id are everything after their colon.
  const [prefix, ...rest] = field.split(':');
  const name = stripNul(rest.join(':'));
  if (prefix === 'score' && name) return scoreTarget(alias, name);
  if (prefix === 'annotation' && rest.length >= 2) {
    const [type, ...id] = rest;
    const t = ANNOTATION_ATTRS.get(type);
    if (!t)
      throw new FilterError('filter_field', 'annotation type must be one of score, value, annotation_name, user_id');
    const criterion = stripNul(id.join(':'));
    if (criterion) return annotationTarget(alias, type, t, criterion);
  }
  throw new FilterError('filter_field', 'unknown filter field');
}

/**
 * The column of a span that a filter reads: `scores` for `score:{name}` (read through span_scores),
 * `annotations` for `annotation:…`, null without a field or for one that compileFilter refuses.
 */
export function filterColumn(f: FilterInput): string | null {
  if (!f.filter_field) return null;
  const entry = CATALOG.get(f.filter_field);
  if (entry) return entry[0];
  const prefix = f.filter_field.split(':')[0];
  return prefix === 'score' ? 'scores' : prefix === 'annotation' ? 'annotations' : null;
}

/**
 * Compiles a filter into `{ text, params }` for `sql.unsafe(text, params)`, numbering placeholders from
 * `$first`. Returns null when no filter_field is given. Throws FilterError naming the offending input.
 */
export function compileFilter(f: FilterInput, first: number, alias = 's'): CompiledFilter | null {
  if (!f.filter_field) return null;
  if (!Number.isSafeInteger(first) || first < 1) throw new RangeError('first placeholder must be a positive integer');
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(alias)) throw new RangeError('alias must be a plain identifier');

  const target = resolve(f.filter_field, stripNul(f.filter_key), alias);
  const op = f.filter_operator;
  if (!op) throw new FilterError('filter_operator', 'filter_operator is required');
  if (!(ALL as readonly string[]).includes(op))
    throw new FilterError('filter_operator', `filter_operator must be one of ${ALL.join(', ')}`);
  if (!target.ops.includes(op as FilterOperator)) {
    throw new FilterError('filter_operator', `operator ${op} is not supported by this field`);
  }
  const c = new Ctx(first, op as FilterOperator, stripNul(f.filter_value));
  const text = target.compile(c);
  return { text: `(${text})`, params: c.params };
}
