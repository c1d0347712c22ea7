import { RE2JS, RE2JSSyntaxException } from 're2js';

// Patterns that users supply (regex_match metrics, JSON-schema `pattern` and `patternProperties`) run on
// RE2, whose matching time is linear in the text: a backtracking engine can take exponential time on
// patterns no heuristic reliably spots, such as `^(a|a)+$`, and would block the process that runs it.
// RE2 has no backreferences or lookarounds: such patterns do not compile, and are refused.

/** The flags a regex_match metric may set. `u` changes nothing: RE2 always matches by code point. */
const FLAGS: Record<string, number> = {
  i: RE2JS.CASE_INSENSITIVE,
  m: RE2JS.MULTILINE,
  s: RE2JS.DOTALL,
  u: 0,
};

/**
 * Linear is not cheap enough on its own: matching costs up to the text's length times the compiled
 * program's size, and repeat counts make a short pattern a large program (`[a-z]{1000}` fifty times is
 * 50,000 instructions, seconds per megabyte of output). Compiling is itself slow for large programs, so
 * a pattern whose estimated size is far over the limit is refused before it is compiled.
 */
const MAX_PROGRAM_SIZE = 5_000;

/**
 * About the number of instructions RE2 compiles a pattern to, read from its text without parsing it
 * fully: each character, class or escape is one, a repeat `{n,m}` multiplies what it repeats.
 */
export function estimatedProgramSize(pattern: string): number {
  const frames = [{ done: 0, current: 0, last: 0 }];
  const atom = (size: number) => {
    const f = frames.at(-1)!;
    f.current += size;
    f.last = size;
  };
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    const f = frames.at(-1)!;
    if (c === '\\') {
      // \p{Greek} and \x{263a} are one character; \Q...\E counts each of its characters.
      const braced = /^[pPx]\{[^}]*\}/.exec(pattern.slice(i + 1, i + 100));
      i += braced ? braced[0].length : 1;
      atom(1);
    } else if (c === '[') {
      // A class is one instruction. `]` first in it is literal; `[[:alpha:]]` ends early, counting one more.
      i += pattern[i + 1] === '^' ? 2 : 1;
      if (pattern[i] === ']') i++;
      for (; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
      atom(1);
    } else if (c === '(') frames.push({ done: 0, current: 0, last: 0 });
    else if (c === ')' && frames.length > 1) {
      frames.pop();
      atom(f.done + f.current);
    } else if (c === '|') {
      f.done += f.current + 1;
      f.current = f.last = 0;
    } else if (c === '*' || c === '+' || c === '?') f.current += 1;
    else {
      const repeat = c === '{' && /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 30));
      if (!repeat) atom(1);
      else {
        const min = Number(repeat[1]);
        const max = repeat[2] ? (repeat[3] ? Number(repeat[3]) : min + 1) : min;
        f.current += f.last * (Math.max(min, max) - 1) + (max - min);
        f.last *= Math.max(min, max, 1);
        i += repeat[0].length - 1;
      }
    }
  }
  return frames.reduce((sum, f) => sum + f.done + f.current, 0);
}

/** A compiled pattern; throws an Error saying why the pattern cannot be used. */
export function compileRegex(pattern: string, flags?: string | null): RE2JS {
  let bits = 0;
  for (const flag of flags ?? '') {
    if (!Object.hasOwn(FLAGS, flag)) throw new Error(`unsupported regular expression flag '${flag}'`);
    bits |= FLAGS[flag];
  }
  const tooLarge = (size: number) =>
    new Error(
      `pattern is too large: about ${size} instructions once its repeats are expanded, at most ${MAX_PROGRAM_SIZE}`,
    );
  const estimate = estimatedProgramSize(pattern);
  if (estimate > 2 * MAX_PROGRAM_SIZE) throw tooLarge(estimate);
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern, bits);
  } catch (err) {
    if (err instanceof RE2JSSyntaxException)
      throw new Error(`not a pattern RE2 accepts (it has no backreferences or lookarounds): ${err.message}`, {
        cause: err,
      });
    throw err;
  }
  // re2Input.prog is RE2JS's compiled program (the version is pinned): its exact size.
  const size = re.re2Input.prog.numInst() as number;
  if (size > MAX_PROGRAM_SIZE) throw tooLarge(size);
  return re;
}

/** Why a pattern cannot be used (not RE2 syntax, too large, an unknown flag), or null. */
export function regexError(pattern: string, flags?: string | null): string | null {
  try {
    compileRegex(pattern, flags);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * RE2 as ajv's regex engine (its `code.regExp` option). Ajv calls it with a pattern and `u`, caches the
 * result under its toString() (RE2JS gives the pattern's source, so distinct patterns never share one),
 * and calls test() on it. `code` would name the engine in standalone generated code, which is not used.
 */
export const ajvRegExp = Object.assign(
  (pattern: string) => {
    try {
      return compileRegex(pattern);
    } catch (err) {
      // Ajv's own message would not say which of a schema's patterns it was.
      throw new Error(`pattern ${JSON.stringify(pattern)}: ${(err as Error).message}`, { cause: err });
    }
  },
  { code: 're2js' },
);
