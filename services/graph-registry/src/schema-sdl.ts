import { GraphQLError, Kind, parse, type DocumentNode } from 'graphql';
// graphql-js runs these same rules inside buildSchema, but only reports their messages joined
// into one string there; called directly they keep each error's location.
import { validateSDL } from 'graphql/validation/validate.js';

export interface SourceLocation {
  line: number;
  column: number;
}

export interface SdlProblem {
  message: string;
  locations: SourceLocation[];
}

function problemOf(error: GraphQLError): SdlProblem {
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

/**
 * Checks GraphQL schema text (SDL) the way graphql-js' buildSchema does: syntax first, then the
 * SDL validation rules (unknown types, duplicate names, misplaced directives…). Returns every
 * problem with its line and column, or an empty list when the schema is valid.
 */
export function findSdlProblems(sdl: string): SdlProblem[] {
  try {
    const document = parse(sdl);
    return [...executableDefinitions(document), ...validateSDL(document).map(problemOf)];
  } catch (err) {
    if (err instanceof GraphQLError) return [problemOf(err)];
    // The parser and the validator recurse: absurd nesting such as `[[[[…]]]]` exhausts the stack.
    if (err instanceof RangeError) return [{ message: 'Schema is nested too deeply.', locations: [] }];
    throw err;
  }
}
