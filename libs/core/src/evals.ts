import { Ajv, type ValidateFunction } from 'ajv';
import { distance } from 'fastest-levenshtein';
import { LRUCache } from 'lru-cache';
import { ajvRegExp, compileRegex } from './regex';
import { MAX_NESTING, nestsDeeperThan } from './text';

// The built-in evaluation metrics: deterministic, cheap, run on the worker. Each returns a score in
// 0..1 with a reason, or an error when it cannot score (never a made-up score).

export type EvalInput = { output: string; target: string | null; inputs: Record<string, unknown> };
/**
 * One evaluation result: a score with its reason, or why there is none. Queued payloads carry it, checked by
 * the EvalResult schema of @sightline/schemas, which is held to this type (core imports nothing of schemas).
 */
export type EvalResult = { score: number; reason?: string | null } | { error: string };
/** A metric's configuration, as EvalMetricCreateSchema accepted it for the metric's type. */
type Config =
  | { case_sensitive?: boolean | null; value?: string | null; pattern?: string; flags?: string | null; schema?: object }
  | null
  | undefined;

// One validator instance for every organization: `addUsedSchema: false` keeps a schema's $id out of its
// registry, so one organization's schema can neither clash with nor be referenced by another's. Its
// `pattern` and `patternProperties` run on RE2 (see ./regex), as regex_match metrics do.
const ajv = new Ajv({ allErrors: true, strict: false, addUsedSchema: false, code: { regExp: ajvRegExp } });
const validators = new LRUCache<string, ValidateFunction>({ max: 1000 });

function validatorFor(schema: object): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = validators.get(key);
  if (!validate) validators.set(key, (validate = ajv.compile(schema)));
  return validate;
}

// Edit distance is quadratic: longer texts are compared on their first characters only.
const LEVENSHTEIN_MAX_CHARS = 10_000;

const needsTarget = (name: string): EvalResult => ({ error: `${name} needs a target on the span` });
const fold = (s: string, caseSensitive: unknown) => (caseSensitive === false ? s.toLowerCase() : s);

export const deterministicMetrics: Record<string, (input: EvalInput, config: Config) => EvalResult> = {
  levenshtein({ output, target }) {
    if (target == null) return needsTarget('levenshtein');
    const a = output.slice(0, LEVENSHTEIN_MAX_CHARS),
      b = target.slice(0, LEVENSHTEIN_MAX_CHARS);
    const longest = Math.max(a.length, b.length);
    const d = distance(a, b);
    const cut =
      a.length < output.length || b.length < target.length ? ` (first ${LEVENSHTEIN_MAX_CHARS} characters)` : '';
    return {
      score: longest === 0 ? 1 : 1 - d / longest,
      reason: `edit distance ${d} over ${longest} characters${cut}`,
    };
  },
  exact_match({ output, target }, config) {
    if (target == null) return needsTarget('exact_match');
    const same =
      fold(output.trim(), config?.case_sensitive ?? true) === fold(target.trim(), config?.case_sensitive ?? true);
    return { score: same ? 1 : 0, reason: same ? 'output equals the target' : 'output differs from the target' };
  },
  contains({ output, target }, config) {
    const needle = config?.value ?? target;
    if (needle == null) return { error: 'contains needs a configured value or a target on the span' };
    const found = fold(output, config?.case_sensitive ?? true).includes(fold(needle, config?.case_sensitive ?? true));
    return { score: found ? 1 : 0, reason: `${JSON.stringify(needle)} ${found ? 'found' : 'not found'} in the output` };
  },
  regex_match({ output }, config) {
    const matched = compileRegex(config!.pattern!, config?.flags).test(output);
    return { score: matched ? 1 : 0, reason: `/${config!.pattern}/ ${matched ? 'matches' : 'does not match'}` };
  },
  json_valid({ output }) {
    try {
      JSON.parse(output);
      return { score: 1, reason: 'valid JSON' };
    } catch (err) {
      return { score: 0, reason: `not JSON: ${(err as Error).message}` };
    }
  },
  json_schema({ output }, config) {
    // Ajv validates recursively, a stack frame or more per level: a 400,000-deep array overflows the stack.
    // Outputs are held to the nesting request bodies are held to.
    if (nestsDeeperThan(output, MAX_NESTING))
      return { score: 0, reason: `output nests deeper than ${MAX_NESTING} levels` };
    let value: unknown;
    try {
      value = JSON.parse(output);
    } catch {
      return { score: 0, reason: 'output is not JSON' };
    }
    const validate = validatorFor(config!.schema!);
    let valid: boolean;
    try {
      valid = validate(value) as boolean;
    } catch (err) {
      // A schema that refers to itself without descending into the value ({"allOf": [{"$ref": "#"}]}
      // through $defs) recurses until the stack overflows, whatever the output.
      if (err instanceof RangeError) return { error: `the schema recursed too deeply: ${err.message}` };
      throw err;
    }
    return valid
      ? { score: 1, reason: 'valid against the schema' }
      : { score: 0, reason: ajv.errorsText(validate.errors) };
  },
};

/**
 * Why a json_schema metric's schema cannot be used, or null: it must compile, its regex patterns
 * (`pattern`, `patternProperties`) included, which must be RE2's (see ./regex).
 */
export function jsonSchemaError(schema: object): string | null {
  try {
    validatorFor(schema);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Fills a judge prompt's {{output}}, {{target}} and {{inputs.<name>}} placeholders. */
export function judgePrompt(template: string, { output, target, inputs }: EvalInput): string {
  return template.replace(/\{\{\s*([^{}\s]+)\s*\}\}/g, (whole, name: string) => {
    if (name === 'output') return output;
    if (name === 'target') return target ?? '';
    if (name.startsWith('inputs.')) {
      const value = Object.hasOwn(inputs, name.slice(7)) ? inputs[name.slice(7)] : undefined;
      return value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
    }
    return whole;
  });
}

/**
 * Reads a judge's answer: JSON `{"score": x, "reason": "..."}` (possibly inside other text), or a line
 * `score: x`. The score must lie in 0..1; anything else is an error, never a guess.
 */
export function parseJudgeAnswer(answer: string): EvalResult {
  const json = /\{[\s\S]*\}/.exec(answer)?.[0];
  if (json) {
    try {
      const parsed = JSON.parse(json) as { score?: unknown; reason?: unknown };
      const score =
        typeof parsed.score === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(parsed.score)
          ? Number(parsed.score)
          : parsed.score;
      if (typeof score === 'number' && score >= 0 && score <= 1)
        return { score, reason: typeof parsed.reason === 'string' ? parsed.reason : null };
    } catch {
      // not JSON after all: try the plain form
    }
  }
  // The last "score: x" is the verdict; earlier ones are usually the judge reasoning about the scale.
  const plain = [...answer.matchAll(/score\s*[:=]\s*(-?\d+(?:\.\d+)?)/gi)].at(-1);
  if (plain && Number(plain[1]) >= 0 && Number(plain[1]) <= 1)
    return { score: Number(plain[1]), reason: answer.trim().slice(0, 1000) };
  return { error: `the judge's answer holds no score between 0 and 1: ${answer.slice(0, 200)}` };
}
