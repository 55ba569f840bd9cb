import { buildASTSchema, GraphQLError, Kind, KnownTypeNamesRule, parse, PossibleTypeExtensionsRule, validateSchema, type ASTNode, type DocumentNode, type GraphQLSchema } from 'graphql';
// graphql-js runs these same rules inside buildSchema, but only reports their messages joined
// into one string there; called directly they keep each error's location.
import { validateSDL } from 'graphql/validation/validate.js';
import { specifiedSDLRules } from 'graphql/validation/specifiedRules.js';
import type { SDLValidationRule } from 'graphql/validation/ValidationContext.js';

export interface SourceLocation {
  line: number;
  column: number;
}

export interface SdlProblem {
  message: string;
  locations: SourceLocation[];
}

/**
 * Bounds on what a schema may cost to check, each a limit on work that grows faster than the
 * text: graphql-js builds every error's location by scanning the text from its start, and
 * suggests names for every unknown type by comparing it with every defined type.
 */
export const SCHEMA_LIMITS = {
  /** Lexical tokens in the document (a 1 MiB schema has at most about 500 000 of them even when written densely). */
  maxTokens: 500_000,
  /** Type, directive and schema definitions and extensions (GitHub's public schema has about 2 000). */
  maxDefinitions: 10_000,
  /** Problems reported; the checks stop at the first this many. */
  maxProblems: 100,
  /** Unknown types (and extensions of unknown types) reported: each costs a comparison with every defined name. */
  maxUnknownTypeProblems: 10,
} as const;

/** The SDL rules whose every report compares a name with every defined type, to suggest one. */
const SUGGESTING_RULES: ReadonlySet<SDLValidationRule> = new Set([KnownTypeNamesRule, PossibleTypeExtensionsRule]);

/** The schema is (maybe) fine, but past what the registry agrees to check: answered 422. */
export class SchemaTooComplex extends Error {
  override readonly name = 'SchemaTooComplex';
}

/** Thrown by a rule's error report past `maxProblems`: stops the SDL validation there. */
class ProblemLimitReached extends Error {}

export function problemOf(error: GraphQLError): SdlProblem {
  return { message: error.message, locations: (error.locations ?? []).map(({ line, column }) => ({ line, column })) };
}

/** An SDL document holds type system definitions only; an operation or fragment is a mistake. */
function executableDefinitions(document: DocumentNode): SdlProblem[] {
  return document.definitions
    .filter((definition) => definition.kind === Kind.OPERATION_DEFINITION || definition.kind === Kind.FRAGMENT_DEFINITION)
    .map((definition) => ({
      message: 'A schema document may only contain type system definitions; found an executable definition.',
      locations: definition.loc ? [{ line: definition.loc.startToken.line, column: definition.loc.startToken.column }] : [],
    }));
}

/** graphql-js' parse stops past `maxTokens` with a syntax error of this text: a limit of ours, not the caller's mistake. */
const TOKEN_LIMIT_MESSAGE = /Document contains more than \d+ tokens/;

/** The document, parsed with graphql-js; SchemaTooComplex past the token or definition limit. */
export function parseSdl(sdl: string): DocumentNode {
  let document: DocumentNode;
  try {
    document = parse(sdl, { maxTokens: SCHEMA_LIMITS.maxTokens });
  } catch (err) {
    if (err instanceof GraphQLError && TOKEN_LIMIT_MESSAGE.test(err.message)) throw new SchemaTooComplex(`schema has more than ${SCHEMA_LIMITS.maxTokens} tokens`);
    throw err;
  }
  if (document.definitions.length > SCHEMA_LIMITS.maxDefinitions) throw new SchemaTooComplex(`schema has more than ${SCHEMA_LIMITS.maxDefinitions} definitions`);
  return document;
}

/**
 * The SDL rules of buildSchema, each stopped after `maxProblems` reports: a document with
 * thousands of unknown type references otherwise costs a name comparison with every type and a
 * scan of the text for each one (quadratic: 50 s for 256 KiB).
 */
function limitedRules(errors: GraphQLError[]): SDLValidationRule[] {
  let suggesting = 0;
  return specifiedSDLRules.map((rule) => (context) => {
    const limited = Object.create(context) as typeof context;
    limited.reportError = (error) => {
      if (SUGGESTING_RULES.has(rule)) suggesting += 1;
      if (errors.length >= SCHEMA_LIMITS.maxProblems || suggesting > SCHEMA_LIMITS.maxUnknownTypeProblems) throw new ProblemLimitReached();
      errors.push(error);
    };
    return rule(limited);
  });
}

function sdlRuleProblems(document: DocumentNode): SdlProblem[] {
  const errors: GraphQLError[] = [];
  try {
    validateSDL(document, undefined, limitedRules(errors));
  } catch (err) {
    if (!(err instanceof ProblemLimitReached)) throw err;
  }
  return errors.map(problemOf);
}

/**
 * A copy of the document without source locations, each copied node mapped to its original in
 * `originals`. Every GraphQLError finds its line by scanning the text from the start, and
 * validateSchema reports every problem it finds (one per field, at worst): without locations
 * its errors cost nothing to make, and only the reported ones are located (`locate`).
 */
function withoutLocations(value: unknown, originals: WeakMap<object, ASTNode>): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutLocations(item, originals));
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) if (key !== 'loc') copy[key] = withoutLocations(field, originals);
  originals.set(copy, value as ASTNode);
  return copy;
}

/** Line and column of text positions: line starts indexed once, then a binary search each. */
function lineIndex(text: string): (position: number) => SourceLocation {
  const starts = [0];
  for (const match of text.matchAll(/\r\n|[\n\r]/g)) starts.push(match.index + match[0].length);
  return (position) => {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (starts[middle]! <= position) low = middle;
      else high = middle - 1;
    }
    return { line: low + 1, column: position - starts[low]! + 1 };
  };
}

function locate(error: GraphQLError, originals: WeakMap<object, ASTNode>, at: (position: number) => SourceLocation): SdlProblem {
  const positions = (error.nodes ?? []).flatMap((node) => {
    const start = originals.get(node)?.loc?.start;
    return start === undefined ? [] : [start];
  });
  return { message: error.message, locations: positions.map(at) };
}

/** What graphql-js' validateSchema finds in a schema that passed the SDL rules (root types, interfaces, input cycles…). */
function schemaProblems(sdl: string, document: DocumentNode): { schema?: GraphQLSchema; problems: SdlProblem[] } {
  const originals = new WeakMap<object, ASTNode>();
  const schema = buildASTSchema(withoutLocations(document, originals) as DocumentNode, { assumeValidSDL: true });
  const errors = validateSchema(schema).slice(0, SCHEMA_LIMITS.maxProblems);
  if (errors.length === 0) return { schema, problems: [] };
  const at = lineIndex(sdl);
  return { problems: errors.map((error) => locate(error, originals, at)) };
}

/**
 * Checks GraphQL schema text (SDL) for use by clients: syntax, the SDL validation rules of
 * buildSchema (unknown types, duplicate names, misplaced directives…), then graphql-js'
 * validateSchema on the built schema (a Query type, fields on every object, interfaces
 * implemented, input and output types in their places, no non-null input cycle…). Returns
 * every problem with its line and column (at most `maxProblems`), or an empty list and the
 * schema when it is valid. Throws SchemaTooComplex past the token or definition limit.
 */
export function checkSdl(sdl: string): { schema?: GraphQLSchema; problems: SdlProblem[] } {
  try {
    const document = parseSdl(sdl);
    const problems = [...executableDefinitions(document), ...sdlRuleProblems(document)];
    if (problems.length > 0) return { problems: problems.slice(0, SCHEMA_LIMITS.maxProblems) };
    return schemaProblems(sdl, document);
  } catch (err) {
    if (err instanceof GraphQLError) return { problems: [problemOf(err)] };
    // The parser and the validator recurse: absurd nesting such as `[[[[…]]]]` exhausts the stack.
    if (err instanceof RangeError) return { problems: [{ message: 'Schema is nested too deeply.', locations: [] }] };
    throw err;
  }
}

/** The problems of `checkSdl` alone. */
export const findSdlProblems = (sdl: string): SdlProblem[] => checkSdl(sdl).problems;
